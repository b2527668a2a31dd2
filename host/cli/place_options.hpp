// `lumos place`'s options: the fleet, the jobs (a file, a sweep's variants or the case study),
// the sweeps over load, grid intensity and lifetime, and how carbon is counted. The command
// itself is cmd_place.cpp.
#pragma once
#include <cxxopts.hpp>

#include <cstdint>

#include "cli/count_options.hpp"
#include "cli/decimal_options.hpp"
#include "cli/quiet_option.hpp"

namespace lumos::cli {

inline constexpr CountOption kPlaceCopies{"copies", 1, 100000}, kPlaceSeed{"seed", 0, INT64_MAX};

inline void place_options(cxxopts::Options& o) {
  o.add_options()("fleet", "fleet file (TOML; README \"Carbon and placement\")",
                  cxxopts::value<std::string>())(
      "jobs", "jobs file (TOML [[job]] tables; at most 1,000,000 jobs)",
      cxxopts::value<std::string>())(
      "sweep", "one job from a `lumos sweep` variants CSV over GPU types",
      cxxopts::value<std::string>())("job-name", "name of the --sweep job",
                                     cxxopts::value<std::string>()->default_value("training"))(
      kPlaceCopies.name,
      count_help("--sweep: this many such jobs, running at once (they share the fleet)",
                 kPlaceCopies),
      count_value("1"))("score-year",
                        "per-score-year values of each server type (the paper's Tables 2 and 4)")(
      "utilization",
      "sweep the load FROM:TO:STEP (e.g. 0:1:0.05; at most 1,000,000 jobs a level, estimated "
      "before any is built)",
      cxxopts::value<std::string>())(
      "job-score", "--utilization: every job needs this benchmark score", decimal_value())(
      "case-study", "--utilization: jobs of the paper's virtual-core classes (seeded)")(
      kPlaceSeed.name, count_help("--case-study seed", kPlaceSeed), count_value("1"))(
      "case-study-model",
      "--case-study: paper (every server's embodied carbon + operational + a base power per "
      "server running jobs, sized so that embodied carbon is 20% of lifecycle emissions; "
      "default) | fleet (no base power) | marginal (operational only)",
      cxxopts::value<std::string>())(
      "sweep-grid-intensity",
      "per score-year, what SCI's choice adds at each grid intensity FROM:TO:STEP (Fig. 3)",
      cxxopts::value<std::string>())(
      "sweep-lifetime",
      "per score-year, what SCI's choice adds at each lifetime FROM:TO:STEP (Fig. 4)",
      cxxopts::value<std::string>())("o,output",
                                     "--utilization, --sweep-*: write the curve to this CSV",
                                     cxxopts::value<std::string>())(
      "plot", "--utilization, --sweep-*: draw the curve to this SVG file",
      cxxopts::value<std::string>())(
      "amortization", "linear | zero-after-lifetime | years-in-service",
      cxxopts::value<std::string>()->default_value("years-in-service"))(
      "grid-intensity", "gCO2/kWh, in [0, 10000] (default: the fleet's grid_g_per_kwh)",
      decimal_value())(
      "procurement",
      "the server types are candidates to buy: footprints count the embodied carbon of the "
      "servers the jobs need, not of every server listed")("json", "print JSON")("h,help",
                                                                                 "show this help");
  add_quiet_option(o);
  o.parse_positional({"fleet"});
  o.positional_help("FLEET.toml");
}

}  // namespace lumos::cli
