#include "replay/rank_windows.hpp"

#include <algorithm>
#include <numeric>

namespace lumos::replay {

std::vector<StepWindow> step_windows(const graph::Graph& g, const std::vector<double>& start_us,
                                     const std::vector<double>& step_us) {
  std::vector<StepWindow> w(g.steps.size());
  std::map<int32_t, std::vector<size_t>> of_rank;
  for (size_t k = 0; k < g.steps.size() && k < step_us.size(); ++k) {
    const double begin = start_us[g.steps[k].marker];
    w[k] = {g.steps[k].rank, begin, begin + std::max(0.0, step_us[k])};
    of_rank[g.steps[k].rank].push_back(k);
  }
  for (auto& [rank, ks] : of_rank) {
    std::stable_sort(ks.begin(), ks.end(),
                     [&](size_t a, size_t b) { return w[a].begin_us < w[b].begin_us; });
    for (size_t i = 0; i + 1 < ks.size(); ++i)
      w[ks[i]].end_us =
          std::max(w[ks[i]].begin_us, std::min(w[ks[i]].end_us, w[ks[i + 1]].begin_us));
  }
  return w;
}

WindowNodes::WindowNodes(const graph::Graph& g, const std::vector<double>& start_us,
                         const std::vector<double>& finish_us)
    : start_us_(start_us), finish_us_(finish_us) {
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    int32_t rank;
    if (g.step[v] >= 0)
      rank = g.steps[static_cast<size_t>(g.step[v])].rank;
    else if (g.resource[v] != graph::kNoResource)
      rank = g.resources[g.resource[v]].rank;
    else
      continue;
    Rank& r = ranks_[rank];
    r.by_start.push_back(v);
    r.longest_us = std::max(r.longest_us, finish_us[v] - start_us[v]);
  }
  for (auto& [rank, r] : ranks_)
    std::stable_sort(r.by_start.begin(), r.by_start.end(),
                     [&](graph::NodeId a, graph::NodeId b) { return start_us[a] < start_us[b]; });
}

std::vector<graph::NodeId> WindowNodes::in(int32_t rank, double begin_us, double end_us) const {
  std::vector<graph::NodeId> out;
  const auto it = ranks_.find(rank);
  if (it == ranks_.end()) return out;
  const Rank& r = it->second;
  // A node that runs in the window starts before its end and at most the rank's longest node
  // before its begin.
  const auto starts_before = [&](graph::NodeId v, double t) { return start_us_[v] < t; };
  auto lo = std::lower_bound(r.by_start.begin(), r.by_start.end(), begin_us - r.longest_us,
                             starts_before);
  const auto hi = std::lower_bound(lo, r.by_start.end(), end_us, starts_before);
  for (; lo != hi; ++lo)
    if (finish_us_[*lo] > begin_us || start_us_[*lo] >= begin_us) out.push_back(*lo);
  return out;
}

std::vector<RankWindows> rank_windows(const graph::Graph& g, const ReplayResult& r,
                                      const std::vector<StepTime>& steps) {
  std::vector<double> step_us(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) step_us[k] = steps[k].replayed_us;
  const std::vector<StepWindow> windows = step_windows(g, r.start_us, step_us);
  const WindowNodes nodes(g, r.start_us, r.finish_us);
  std::map<int32_t, RankWindows> by_rank;
  for (size_t k = 0; k < g.steps.size() && k < steps.size(); ++k) {
    const StepWindow& sw = windows[k];
    RankWindows& w = by_rank[sw.rank];
    w.rank = sw.rank;
    ++w.steps;
    const std::vector<graph::NodeId> of = nodes.in(sw.rank, sw.begin_us, sw.end_us);
    w.breakdown += breakdown(g, r.start_us, r.finish_us, of, sw.begin_us, sw.end_us);
    w.idle += gpu_idle_split(g, r, of, sw.begin_us, sw.end_us);
  }
  std::vector<RankWindows> out;
  for (auto& [rank, w] : by_rank) out.push_back(w);
  return out;
}

}  // namespace lumos::replay
