#include "whatif/stragglers.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "common/error.hpp"

namespace lumos::whatif {
namespace {

void expect_rank(const graph::MultiRankResult& m, int32_t rank) {
  if (std::find(m.ranks.begin(), m.ranks.end(), rank) == m.ranks.end())
    throw InputError("lumos replay: no rank " + std::to_string(rank) + " among the " +
                     std::to_string(m.ranks.size()) + " traces");
}

// A straggler is a few times slower, not 10^300 times: beyond a factor of 1000 either way the
// replayed times lose meaning (and an infinite one prints as null). A skew beyond 10^9 us (about
// 17 minutes) is a clock problem, not a late start.
constexpr double kMinSlowFactor = 1e-3, kMaxSlowFactor = 1e3, kMaxSkewUs = 1e9;

void check_range(const RankValue& v, const std::string& option) {
  if (option == "--slow-rank")
    LUMOS_EXPECT(v.value >= kMinSlowFactor && v.value <= kMaxSlowFactor,
                 "lumos replay: --slow-rank: the factor must be between 0.001 and 1000 (got " +
                     std::to_string(v.value) + ")");
  else if (option == "--skew")
    LUMOS_EXPECT(std::fabs(v.value) <= kMaxSkewUs,
                 "lumos replay: --skew: the skew must be within +-1e9 us (about 17 minutes)");
}

// A rank named twice by one option is a typo or a script's mistake: the two factors would
// compound (or the skews add) without anyone having asked for that.
void expect_each_rank_once(const std::vector<RankValue>& values, const std::string& option) {
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      LUMOS_EXPECT(values[j].rank != values[i].rank, "lumos replay: " + option + ": rank " +
                                                         std::to_string(values[i].rank) +
                                                         " given twice (one value per rank)");
}

bool on_rank(const graph::Graph& g, graph::NodeId v, int32_t rank) {
  return g.resource[v] != graph::kNoResource && g.resources[g.resource[v]].rank == rank;
}

}  // namespace

RankValue parse_rank_value(const std::string& text, const std::string& option) {
  const size_t colon = text.find(':');
  LUMOS_EXPECT(colon != std::string::npos,
               "lumos replay: " + option + ": expected RANK:VALUE, got '" + text + "'");
  char* end = nullptr;
  const long r = std::strtol(text.c_str(), &end, 10);
  LUMOS_EXPECT(end == text.c_str() + colon && r >= 0 && r <= INT32_MAX,
               "lumos replay: " + option + ": bad rank in '" + text + "'");
  const double v = std::strtod(text.c_str() + colon + 1, &end);
  LUMOS_EXPECT(*end == '\0' && std::isfinite(v),
               "lumos replay: " + option + ": bad value in '" + text + "'");
  const RankValue rv{static_cast<int32_t>(r), v};
  check_range(rv, option);
  return rv;
}

std::vector<double> apply_stragglers(graph::MultiRankResult* m, const StragglerEdits& edits) {
  graph::Graph& g = m->graph;
  expect_each_rank_once(edits.slow, "--slow-rank");
  expect_each_rank_once(edits.skew, "--skew");
  std::vector<double> dur = g.dur_us;
  for (const RankValue& s : edits.slow) {
    expect_rank(*m, s.rank);
    check_range(s, "--slow-rank");
    for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
      if (on_rank(g, v, s.rank) &&
          (g.cls[v] == graph::NodeClass::kCompute || g.cls[v] == graph::NodeClass::kMemory))
        dur[v] *= s.value;
  }
  for (const RankValue& s : edits.skew) {
    expect_rank(*m, s.rank);
    check_range(s, "--skew");
    for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
      if (on_rank(g, v, s.rank))
        for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
          if (g.pred_index[e] == graph::kOrigin) g.pred_lag_us[e] += s.value;
  }
  return dur;
}

}  // namespace lumos::whatif
