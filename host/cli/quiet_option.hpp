// --quiet, on every command that shows a progress line (common/progress.hpp) during long work.
#pragma once
#include <cxxopts.hpp>

namespace lumos::cli {

inline void add_quiet_option(cxxopts::Options& o) {
  o.add_options()("quiet", "no progress line on standard error (shown on a terminal after 2 s)");
}

inline bool quiet(const cxxopts::ParseResult& a) {
  return a.count("quiet") > 0;
}

}  // namespace lumos::cli
