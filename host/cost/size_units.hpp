// Parses sizes and bandwidths with units as users write them: 4096, 1e9, 512KiB, 64MiB, 1GiB,
// 1GB (decimal); 400Gbps, 400Gb/s (bits, as NICs are sold), 50GB/s (bytes); durations 250us,
// 1ms, 0.5s.
#pragma once
#include <string>

namespace lumos::cost {

inline constexpr double kMaxBytes = 9007199254740992.0;  // 2^53
inline constexpr double kMinGbytesPerS = 1e-3 / 8;       // 1 Mb/s
inline constexpr double kMaxGbytesPerS = 1e4;            // 10 TB/s, far above any link

// Throws InputError naming `what` when the text is not a non-negative size, or the size is
// above 2^53 bytes.
double parse_bytes(const std::string& text, const std::string& what);

// A bandwidth in GB/s (10^9 bytes per second). The unit is required, since "400" alone is
// ambiguous between gigabits and gigabytes: b = bits (Gbps, Gb/s, Gbit/s; M and T too),
// B = bytes (GB/s, GBps). Throws InputError naming `what` for a missing or unknown unit or a
// rate outside [1 Mb/s, 10 TB/s].
double parse_bandwidth_gbytes_per_s(const std::string& text, const std::string& what);

// A duration in microseconds. The unit is required (us, ms or s). Throws InputError naming
// `what` for a missing or unknown unit, or a duration that is not positive and finite.
double parse_duration_us(const std::string& text, const std::string& what);
// "10%" or "0.1" as a fraction in [0, 1): a share of something, such as the memory a layout
// leaves free. Throws InputError naming `what` otherwise.
double parse_share(const std::string& text, const std::string& what);

}  // namespace lumos::cost
