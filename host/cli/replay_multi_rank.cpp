// lumos replay DIR: the multi-rank replay — per-rank iteration times, the wait/transfer split of
// every collective, the slowest rank and why, and straggler what-ifs (--slow-rank, --skew).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>

#include "cli/replay_multi_rank.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "graph/multi_rank.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "report/timeline_writer.hpp"

namespace lumos::cli {
namespace {

// "R:X" -> (R, X); throws InputError naming the option.
std::pair<int32_t, double> rank_value(const std::string& text, const char* option) {
  const size_t colon = text.find(':');
  LUMOS_EXPECT(colon != std::string::npos, std::string("lumos replay: ") + option +
                                               ": expected RANK:VALUE, got '" + text + "'");
  char* end = nullptr;
  const long r = std::strtol(text.c_str(), &end, 10);
  LUMOS_EXPECT(end == text.c_str() + colon && r >= 0 && r <= INT32_MAX,
               std::string("lumos replay: ") + option + ": bad rank in '" + text + "'");
  const double v = std::strtod(text.c_str() + colon + 1, &end);
  LUMOS_EXPECT(*end == '\0' && std::isfinite(v),
               std::string("lumos replay: ") + option + ": bad value in '" + text + "'");
  return {static_cast<int32_t>(r), v};
}

}  // namespace

int replay_multi_rank(const std::string& dir, const MultiRankOptions& o) {
  graph::MultiRankResult m = graph::load_multi_rank(dir);
  graph::Graph& g = m.graph;
  auto rank_index = [&](int32_t rank) {
    for (size_t i = 0; i < m.ranks.size(); ++i)
      if (m.ranks[i] == rank) return static_cast<int>(i);
    throw InputError("lumos replay: no rank " + std::to_string(rank) + " among the " +
                     std::to_string(m.ranks.size()) + " traces");
  };
  // What-ifs: a slower rank (its compute and memory work scaled) and a late start.
  std::vector<double> dur = g.dur_us;
  for (const std::string& s : o.slow_ranks) {
    const auto [rank, factor] = rank_value(s, "--slow-rank");
    rank_index(rank);
    LUMOS_EXPECT(factor > 0, "lumos replay: --slow-rank: the factor must be positive");
    for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
      if (g.resource[v] != graph::kNoResource && g.resources[g.resource[v]].rank == rank &&
          (g.cls[v] == graph::NodeClass::kCompute || g.cls[v] == graph::NodeClass::kMemory))
        dur[v] *= factor;
  }
  for (const std::string& s : o.skews) {
    const auto [rank, us] = rank_value(s, "--skew");
    rank_index(rank);
    for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
      if (g.resource[v] != graph::kNoResource && g.resources[g.resource[v]].rank == rank)
        for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
          if (g.pred_index[e] == graph::kOrigin) g.pred_lag_us[e] += us;
  }
  const replay::ReplayResult r = replay::reference_replay(g, &dur);
  const auto steps = replay::step_times(g, r);
  if (!o.timeline.empty()) report::write_timeline(g, r, o.timeline);
  // Per rank: iteration time (its steps summed), the collective it waited on longest, for whom.
  const size_t R = m.ranks.size();
  std::vector<double> measured(R, 0), replayed(R, 0);
  for (const auto& s : steps) {
    const int i = rank_index(s.rank);
    measured[i] += s.measured_us, replayed[i] += s.replayed_us;
  }
  // Waits as replayed (equal to the measured ones unless a what-if moved the arrivals), per
  // member of each collective; members are ranks by index (rank_index).
  std::vector<std::vector<double>> wait(m.collectives.size());
  for (size_t k = 0; k < m.collectives.size(); ++k) {
    double last = -std::numeric_limits<double>::infinity();
    for (graph::NodeId a : m.collectives[k].arrive) last = std::max(last, r.start_us[a]);
    for (graph::NodeId a : m.collectives[k].arrive) wait[k].push_back(last - r.start_us[a]);
  }
  // Per rank: the collective it waited on longest (-1 when it took part in none).
  std::vector<int64_t> longest(R, -1);
  std::vector<double> longest_wait(R, -1);
  for (size_t k = 0; k < m.collectives.size(); ++k)
    for (size_t j = 0; j < wait[k].size(); ++j) {
      const size_t i = m.collectives[k].rank_index[j];
      if (wait[k][j] > longest_wait[i])
        longest_wait[i] = wait[k][j], longest[i] = static_cast<int64_t>(k);
    }
  // The rank (index) that arrived last at collective k.
  auto last_arrival = [&](size_t k) {
    const auto& w = wait[k];
    return m.collectives[k]
        .rank_index[static_cast<size_t>(std::min_element(w.begin(), w.end()) - w.begin())];
  };
  const size_t slowest =
      static_cast<size_t>(std::max_element(replayed.begin(), replayed.end()) - replayed.begin());
  // The straggler: the rank the others spent the most time waiting for (as the last arrival).
  std::vector<double> waited_on(R, 0);
  for (size_t k = 0; k < m.collectives.size(); ++k)
    for (double x : wait[k]) waited_on[last_arrival(k)] += x;
  const size_t straggler =
      static_cast<size_t>(std::max_element(waited_on.begin(), waited_on.end()) - waited_on.begin());
  // Replayed end of each collective on each rank, and their spread.
  std::vector<double> spread(m.collectives.size(), 0);
  for (size_t k = 0; k < m.collectives.size(); ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (graph::NodeId t : m.collectives[k].transfer)
      lo = std::min(lo, r.finish_us[t]), hi = std::max(hi, r.finish_us[t]);
    spread[k] = hi - lo;
  }
  if (o.json) {
    common::JsonWriter w(std::cout);
    w.begin_object().field("input", dir).field("ranks_count", static_cast<uint64_t>(R));
    w.key("graph")
        .begin_object()
        .field("nodes", g.num_nodes())
        .field("edges", g.num_edges())
        .field("wavefronts", g.num_waves())
        .end_object();
    w.key("steps").begin_array();
    for (const auto& s : steps)
      w.begin_object()
          .field("name", s.name)
          .field("rank", s.rank)
          .field("measured_us", s.measured_us)
          .field("replayed_us", s.replayed_us)
          .field("error_pct", s.error_pct)
          .end_object();
    w.end_array();
    w.key("ranks").begin_array();
    for (size_t i = 0; i < R; ++i) {
      w.begin_object()
          .field("rank", m.ranks[i])
          .field("trace", m.paths[i])
          .field("measured_us", measured[i])
          .field("replayed_us", replayed[i]);
      w.field("clock_shift_us", m.clock_shift_us[i]);
      if (longest[i] >= 0) {
        const auto k = static_cast<size_t>(longest[i]);
        w.key("longest_wait")
            .begin_object()
            .field("collective", static_cast<uint64_t>(k))
            .field("name", m.collectives[k].name);
        w.field("wait_us", longest_wait[i])
            .field("waited_for_rank", m.ranks[last_arrival(k)])
            .end_object();
      }
      w.end_object();
    }
    w.end_array();
    w.key("slowest_rank")
        .begin_object()
        .field("rank", m.ranks[slowest])
        .field("replayed_us", replayed[slowest])
        .end_object();
    w.key("straggler")
        .begin_object()
        .field("rank", m.ranks[straggler])
        .field("waited_on_us", waited_on[straggler])
        .end_object();
    w.key("collectives").begin_array();
    for (size_t k = 0; k < m.collectives.size(); ++k) {
      const auto& c = m.collectives[k];
      w.begin_object().field("index", static_cast<uint64_t>(k)).field("name", c.name);
      w.key("ranks").begin_array();
      for (size_t i : c.rank_index) w.value(m.ranks[i]);
      w.end_array();
      w.key("wait_us").begin_array();
      for (double x : c.wait_us) w.value(x);
      w.end_array().key("transfer_us").begin_array();
      for (double x : c.transfer_us) w.value(x);
      w.end_array().key("replayed_wait_us").begin_array();
      for (double x : wait[k]) w.value(x);
      w.end_array().key("replayed_end_us").begin_array();
      for (graph::NodeId t : c.transfer) w.value(r.finish_us[t]);
      w.end_array()
          .field("replayed_end_spread_us", spread[k])
          .field("last_arrival_rank", m.ranks[last_arrival(k)])
          .end_object();
    }
    w.end_array().end_object();
    std::cout << '\n';
    return 0;
  }
  std::printf("lumos replay: %s (%zu ranks; %u nodes, %u edges, %u wavefronts)\n\n", dir.c_str(), R,
              g.num_nodes(), g.num_edges(), g.num_waves());
  std::printf("%5s %14s %14s %9s %14s  %s\n", "rank", "measured_us", "replayed_us", "error",
              "clock_shift_us", "longest wait");
  for (size_t i = 0; i < R; ++i) {
    const double err = measured[i] > 0 ? (replayed[i] - measured[i]) / measured[i] * 100 : 0;
    std::string why = "-";
    if (longest[i] >= 0) {
      const auto k = static_cast<size_t>(longest[i]);
      char buf[200];
      std::snprintf(buf, sizeof(buf), "%.1f us at collective %zu (for rank %d)", longest_wait[i], k,
                    m.ranks[last_arrival(k)]);
      why = buf;
    }
    std::printf("%5d %14.1f %14.1f %8.3f%% %14.1f  %s\n", m.ranks[i], measured[i], replayed[i], err,
                m.clock_shift_us[i], why.c_str());
  }
  std::printf(
      "\nslowest rank: %d (%.1f us replayed); straggler: rank %d (the others waited %.1f us for it "
      "as the last arrival)\n",
      m.ranks[slowest], replayed[slowest], m.ranks[straggler], waited_on[straggler]);
  std::printf("\n%4s %-40s %12s %12s %12s %12s %8s\n", "coll", "kernel", "max wait", "mean wait",
              "mean xfer", "end spread", "last in");
  // A pipelined job has thousands of collectives: the text lists the 20 with the longest waits.
  std::vector<size_t> shown(m.collectives.size());
  for (size_t k = 0; k < shown.size(); ++k) shown[k] = k;
  auto max_wait = [&](size_t k) { return *std::max_element(wait[k].begin(), wait[k].end()); };
  constexpr size_t kAll = 40, kTop = 20;
  if (shown.size() > kAll) {
    std::stable_sort(shown.begin(), shown.end(),
                     [&](size_t a, size_t b) { return max_wait(a) > max_wait(b); });
    shown.resize(kTop);
    std::sort(shown.begin(), shown.end());
  }
  for (size_t k : shown) {
    const auto& c = m.collectives[k];
    double mw = 0, mt = 0;
    const double members = static_cast<double>(c.arrive.size());
    for (size_t j = 0; j < c.arrive.size(); ++j) mw += wait[k][j], mt += c.transfer_us[j];
    std::printf("%4zu %-40.40s %12.1f %12.1f %12.1f %12.1f %8d\n", k, c.name.c_str(), max_wait(k),
                mw / members, mt / members, spread[k], m.ranks[last_arrival(k)]);
  }
  if (shown.size() < m.collectives.size())
    std::printf("(the %zu with the longest waits of %zu collectives; --json lists all)\n",
                shown.size(), m.collectives.size());
  return 0;
}

}  // namespace lumos::cli
