#include "replay/rank_windows.hpp"

#include <map>

namespace lumos::replay {

std::vector<RankWindows> rank_windows(const graph::Graph& g, const ReplayResult& r,
                                      const std::vector<StepTime>& steps) {
  std::vector<std::vector<graph::NodeId>> of_step(g.steps.size());
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.step[v] >= 0) of_step[static_cast<size_t>(g.step[v])].push_back(v);
  std::map<int32_t, RankWindows> by_rank;
  for (size_t k = 0; k < g.steps.size() && k < steps.size(); ++k) {
    const double begin = r.start_us[g.steps[k].marker], end = begin + steps[k].replayed_us;
    RankWindows& w = by_rank[g.steps[k].rank];
    w.rank = g.steps[k].rank;
    ++w.steps;
    w.breakdown += breakdown(g, r.start_us, r.finish_us, of_step[k], begin, end);
    w.idle += gpu_idle_split(g, r, of_step[k], begin, end);
  }
  std::vector<RankWindows> out;
  for (auto& [rank, w] : by_rank) out.push_back(w);
  return out;
}

}  // namespace lumos::replay
