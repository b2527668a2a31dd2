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

std::map<int32_t, std::vector<graph::NodeId>> nodes_by_rank(const graph::Graph& g) {
  std::map<int32_t, std::vector<graph::NodeId>> out;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.step[v] >= 0) {
      out[g.steps[static_cast<size_t>(g.step[v])].rank].push_back(v);
    } else if (g.resource[v] != graph::kNoResource) {
      out[g.resources[g.resource[v]].rank].push_back(v);
    }
  }
  return out;
}

std::vector<RankWindows> rank_windows(const graph::Graph& g, const ReplayResult& r,
                                      const std::vector<StepTime>& steps) {
  std::vector<double> step_us(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) step_us[k] = steps[k].replayed_us;
  const std::vector<StepWindow> windows = step_windows(g, r.start_us, step_us);
  const auto nodes = nodes_by_rank(g);
  const std::vector<graph::NodeId> none;
  std::map<int32_t, RankWindows> by_rank;
  for (size_t k = 0; k < g.steps.size() && k < steps.size(); ++k) {
    const StepWindow& sw = windows[k];
    RankWindows& w = by_rank[sw.rank];
    w.rank = sw.rank;
    ++w.steps;
    const auto it = nodes.find(sw.rank);
    const std::vector<graph::NodeId>& of = it == nodes.end() ? none : it->second;
    w.breakdown += breakdown(g, r.start_us, r.finish_us, of, sw.begin_us, sw.end_us);
    w.idle += gpu_idle_split(g, r, of, sw.begin_us, sw.end_us);
  }
  std::vector<RankWindows> out;
  for (auto& [rank, w] : by_rank) out.push_back(w);
  return out;
}

}  // namespace lumos::replay
