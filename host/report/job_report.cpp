// The multi-rank half of report/replay_report.hpp.
#include <algorithm>

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/peer_waits_report.hpp"
#include "report/replay_explain.hpp"
#include "report/replay_report.hpp"

namespace lumos::report {

void job_json(std::ostream& os, const std::string& dir, const estimate::JobReplay& j) {
  const graph::MultiRankResult& m = j.job;
  const graph::Graph& g = m.graph;
  const replay::CollectiveWaits& cw = j.waits;
  const size_t R = m.ranks.size();
  common::JsonWriter w(os);
  w.begin_object().field("input", dir).field("ranks_count", static_cast<uint64_t>(R));
  w.key("graph")
      .begin_object()
      .field("nodes", g.num_nodes())
      .field("edges", g.num_edges())
      .field("wavefronts", g.num_waves())
      .end_object();
  w.key("steps").begin_array();
  for (const auto& s : j.steps)
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
        .field("measured_us", cw.measured_us[i])
        .field("replayed_us", cw.replayed_us[i]);
    w.field("clock_shift_us", m.clock_shift_us[i]);
    if (cw.longest[i] >= 0) {
      const auto k = static_cast<size_t>(cw.longest[i]);
      w.key("longest_wait")
          .begin_object()
          .field("collective", static_cast<uint64_t>(k))
          .field("name", m.collectives[k].name);
      w.field("wait_us", cw.longest_wait_us[i])
          .field("waited_for_rank", m.ranks[cw.last_arrival[k]])
          .end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.key("rank_breakdown");
  rank_windows_json(w, j.ranks);
  w.key("slowest_rank")
      .begin_object()
      .field("rank", m.ranks[cw.slowest])
      .field("replayed_us", cw.replayed_us[cw.slowest])
      .end_object();
  w.key("straggler")
      .begin_object()
      .field("rank", m.ranks[cw.straggler])
      .field("waited_on_us", cw.waited_on_us[cw.straggler])
      .end_object();
  w.key("comm_waits");
  peer_waits_json(w, j.peer_waits);
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
    for (double x : cw.wait_us[k]) w.value(x);
    w.end_array().key("replayed_end_us").begin_array();
    for (graph::NodeId t : c.transfer) w.value(j.replay.finish_us[t]);
    w.end_array()
        .field("replayed_end_spread_us", cw.end_spread_us[k])
        .field("last_arrival_rank", m.ranks[cw.last_arrival[k]])
        .end_object();
  }
  w.end_array().end_object();
  os << '\n';
}

void job_text(std::ostream& os, const std::string& dir, const estimate::JobReplay& j) {
  const graph::MultiRankResult& m = j.job;
  const graph::Graph& g = m.graph;
  const replay::CollectiveWaits& cw = j.waits;
  const size_t R = m.ranks.size();
  os << strprintf("lumos replay: %s (%zu ranks; %u nodes, %u edges, %u wavefronts)\n\n",
                  dir.c_str(), R, g.num_nodes(), g.num_edges(), g.num_waves());
  os << strprintf("%5s %14s %14s %9s %14s  %s\n", "rank", "measured_us", "replayed_us", "error",
                  "clock_shift_us", "longest wait");
  for (size_t i = 0; i < R; ++i) {
    const double mu = cw.measured_us[i], ru = cw.replayed_us[i];
    const double err = mu > 0 ? (ru - mu) / mu * 100 : 0;
    std::string why = "-";
    if (cw.longest[i] >= 0) {
      const auto k = static_cast<size_t>(cw.longest[i]);
      why = strprintf("%.1f us at collective %zu (for rank %d)", cw.longest_wait_us[i], k,
                      m.ranks[cw.last_arrival[k]]);
    }
    os << strprintf("%5d %14.1f %14.1f %8.3f%% %14.1f  %s\n", m.ranks[i], mu, ru, err,
                    m.clock_shift_us[i], why.c_str());
  }
  os << strprintf(
      "\nslowest rank: %d (%.1f us replayed); straggler: rank %d (the others waited %.1f us for "
      "it as the last arrival)\n",
      m.ranks[cw.slowest], cw.replayed_us[cw.slowest], m.ranks[cw.straggler],
      cw.waited_on_us[cw.straggler]);
  rank_windows_text(os, j.ranks);
  peer_waits_text(os, j.peer_waits);
  os << strprintf("\n%4s %-40s %12s %12s %12s %12s %8s\n", "coll", "kernel", "max wait",
                  "mean wait", "mean xfer", "end spread", "last in");
  std::vector<size_t> shown(m.collectives.size());
  for (size_t k = 0; k < shown.size(); ++k) shown[k] = k;
  if (shown.size() > kAllCollectives) {
    std::stable_sort(shown.begin(), shown.end(),
                     [&](size_t a, size_t b) { return cw.max_wait_us(a) > cw.max_wait_us(b); });
    shown.resize(kTopCollectives);
    std::sort(shown.begin(), shown.end());
  }
  for (size_t k : shown) {
    const auto& c = m.collectives[k];
    double mw = 0, mt = 0;
    const double members = static_cast<double>(c.arrive.size());
    for (size_t x = 0; x < c.arrive.size(); ++x) mw += cw.wait_us[k][x], mt += c.transfer_us[x];
    os << strprintf("%4zu %-40.40s %12.1f %12.1f %12.1f %12.1f %8d\n", k, c.name.c_str(),
                    cw.max_wait_us(k), mw / members, mt / members, cw.end_spread_us[k],
                    m.ranks[cw.last_arrival[k]]);
  }
  if (shown.size() < m.collectives.size())
    os << strprintf("(the %zu with the longest waits of %zu collectives; --json lists all)\n",
                    shown.size(), m.collectives.size());
}

}  // namespace lumos::report
