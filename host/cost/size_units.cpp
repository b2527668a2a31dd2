#include "cost/size_units.hpp"

#include <cmath>
#include <cstdlib>

#include "common/error.hpp"

namespace lumos::cost {

double parse_bytes(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  LUMOS_EXPECT(end != text.c_str() && std::isfinite(v) && v >= 0,
               what + ": expected a size such as 4096, 64MiB or 1GiB, got '" + text + "'");
  const std::string unit(end);
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB" || unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "MiB" || unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "TiB" || unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "KB" || unit == "kB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else if (unit == "TB")
    scale = 1e12;
  else
    throw InputError(what + ": unknown unit '" + unit +
                     "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
  const double bytes = v * scale;
  // 2^53 bytes (8 PiB): every size below it is an exact integer in a double, and no message,
  // buffer or tensor comes near it.
  LUMOS_EXPECT(bytes <= kMaxBytes,
               what + ": size '" + text + "' is out of range (at most 2^53 bytes, about 8 PiB)");
  return bytes;
}

double parse_bandwidth_gbytes_per_s(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string expected = ": expected a bandwidth with its unit such as 400Gbps, 400Gb/s or " +
                               std::string("50GB/s, got '") + text + "'";
  LUMOS_EXPECT(end != text.c_str() && std::isfinite(v) && v > 0, what + expected);
  const std::string unit(end);
  // Bits (b) as network links are sold, or bytes (B); decimal prefixes as vendors use them.
  double to_gbytes = 0;
  if (unit == "Gbps" || unit == "Gb/s" || unit == "Gbit/s")
    to_gbytes = 1.0 / 8;
  else if (unit == "Tbps" || unit == "Tb/s" || unit == "Tbit/s")
    to_gbytes = 1e3 / 8;
  else if (unit == "Mbps" || unit == "Mb/s" || unit == "Mbit/s")
    to_gbytes = 1e-3 / 8;
  else if (unit == "GB/s" || unit == "GBps")
    to_gbytes = 1;
  else if (unit == "TB/s" || unit == "TBps")
    to_gbytes = 1e3;
  else if (unit == "MB/s" || unit == "MBps")
    to_gbytes = 1e-3;
  else
    throw InputError(what +
                     (unit.empty() ? ": the unit is missing" : ": unknown unit '" + unit + "'") +
                     expected);
  const double gbytes = v * to_gbytes;
  LUMOS_EXPECT(gbytes >= kMinGbytesPerS && gbytes <= kMaxGbytesPerS,
               what + ": bandwidth '" + text + "' is out of range (1 Mb/s to 10 TB/s)");
  return gbytes;
}

double parse_duration_us(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string expected =
      ": expected a duration with its unit such as 250us, 1ms or 0.5s, got '" + text + "'";
  LUMOS_EXPECT(end != text.c_str() && std::isfinite(v) && v > 0, what + expected);
  const std::string unit(end);
  double scale = 0;
  if (unit == "us")
    scale = 1;
  else if (unit == "ms")
    scale = 1e3;
  else if (unit == "s")
    scale = 1e6;
  else
    throw InputError(what + expected);
  return v * scale;
}

double parse_share(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string unit(end ? end : "");
  const double share = unit == "%" ? v / 100.0 : v;
  LUMOS_EXPECT(
      end != text.c_str() && (unit.empty() || unit == "%") && std::isfinite(v) && share >= 0 &&
          share < 1,
      what + ": expected a share such as 10% or 0.1 (0 to under 100%), got '" + text + "'");
  return share;
}

}  // namespace lumos::cost
