// --max-trace-bytes, for the commands that read a trace or a graph file.
#pragma once
#include <cxxopts.hpp>

#include <string>

#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "cost/size_units.hpp"

namespace lumos::cli {

inline void add_input_options(cxxopts::Options& o) {
  o.add_options()("max-trace-bytes",
                  "largest trace or graph to read, after gzip inflation (units: 512MiB, 8GiB)",
                  cxxopts::value<std::string>()->default_value("4GiB"));
}

// Sets the limit every read of this process obeys (each rank of a folder too).
inline void apply_input_options(const cxxopts::ParseResult& a) {
  const std::string text = a["max-trace-bytes"].as<std::string>();
  const double v = cost::parse_bytes(text, "--max-trace-bytes");
  LUMOS_EXPECT(v >= 1 && v < 0x1p64,
               "--max-trace-bytes: expected a size from 1 byte to 8 PiB, got '" + text + "'");
  common::set_max_trace_bytes(static_cast<uint64_t>(v));
}

}  // namespace lumos::cli
