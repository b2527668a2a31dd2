// Straggler what-ifs on a multi-rank job: a rank whose compute runs slower, a rank that starts
// late. They edit the joined graph; the rendezvous then shows how the others wait.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/multi_rank.hpp"

namespace lumos::whatif {

struct RankValue {
  int32_t rank = 0;
  double value = 0;
};

struct StragglerEdits {
  std::vector<RankValue> slow;  // rank R's compute and memory work takes FACTOR times as long
  std::vector<RankValue> skew;  // rank R starts US microseconds late
};

// "R:FACTOR" / "R:US" as given to --slow-rank / --skew; throws InputError naming the option,
// also for a factor outside [0.001, 1000] or a skew beyond +-1e9 us.
RankValue parse_rank_value(const std::string& text, const std::string& option);

// Applies the edits to `m.graph` (skews shift the rank's origin lags) and returns the node
// durations to replay with (slow ranks scaled). Throws InputError for a rank the job lacks or a
// value outside the ranges above.
std::vector<double> apply_stragglers(graph::MultiRankResult* m, const StragglerEdits& edits);

}  // namespace lumos::whatif
