// --min-headroom, as `lumos estimate --search` and `lumos sweep` take it: rank only layouts that
// leave a share of the GPU's memory free (report/sweep_csv.hpp's headroom_fraction).
#pragma once
#include <cxxopts.hpp>

#include <string>

#include "cost/size_units.hpp"

namespace lumos::cli {

// `prefix` says when the option applies ("with --search, "), empty where it always does.
inline void add_min_headroom_option(cxxopts::Options& o, const std::string& prefix) {
  o.add_options()("min-headroom",
                  prefix +
                      "rank only layouts that leave this share of GPU memory free (10% or 0.1; "
                      "default 0: every layout that fits)",
                  cxxopts::value<std::string>());
}

// The share given (0.1 for 10%), 0 without the option; throws InputError naming `command`.
inline double min_headroom_of(const cxxopts::ParseResult& a, const std::string& command) {
  if (!a.count("min-headroom")) return 0;
  return cost::parse_share(a["min-headroom"].as<std::string>(), command + ": --min-headroom");
}

}  // namespace lumos::cli
