#include "replay/reference_replay.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"

namespace lumos::replay {

using graph::Graph;
using graph::NodeId;

ReplayResult reference_replay(const Graph& g, const std::vector<double>* dur_us,
                              const std::vector<double>* release_us) {
  return reference_replay(g, graph::successors_of(g), dur_us, release_us);
}

ReplayResult reference_replay(const Graph& g, const graph::Successors& succ,
                              const std::vector<double>* dur_us,
                              const std::vector<double>* release_us) {
  const uint32_t n = g.num_nodes();
  const std::vector<double>& dur = dur_us ? *dur_us : g.dur_us;
  LUMOS_EXPECT(dur.size() == n, "replay: duration vector does not match the graph");
  LUMOS_EXPECT(!release_us || release_us->size() == n,
               "replay: release vector does not match the graph");
  ReplayResult r;
  r.start_us.assign(n, -std::numeric_limits<double>::infinity());
  r.finish_us.assign(n, 0.0);
  // Fixed dependencies: a node is ready once all its predecessors finished. The ready set is a
  // FIFO: each processor has at most one ready node at a time (its chain edges see to that), so
  // the pick order cannot change the result.
  std::vector<uint32_t> waiting(n);
  for (NodeId v = 0; v < n; ++v) waiting[v] = g.pred_offset[v + 1] - g.pred_offset[v];
  std::vector<double> proc_free(g.resources.size(), -std::numeric_limits<double>::infinity());
  std::vector<NodeId> ready;
  ready.reserve(n);
  ready.push_back(graph::kOrigin);
  r.start_us[graph::kOrigin] = 0.0;
  size_t head = 0;
  double makespan = 0;
  while (head < ready.size()) {
    const NodeId t = ready[head++];
    double s = r.start_us[t];
    const uint32_t p = g.resource[t];
    if (p != graph::kNoResource) s = std::max(s, proc_free[p]);
    if (release_us) s = std::max(s, (*release_us)[t]);
    const double f = s + dur[t];
    r.start_us[t] = s;
    r.finish_us[t] = f;
    if (p != graph::kNoResource) proc_free[p] = f;
    makespan = std::max(makespan, f);
    for (uint32_t k = succ.offset[t]; k < succ.offset[t + 1]; ++k) {
      const NodeId c = succ.index[k];
      r.start_us[c] = std::max(r.start_us[c], f + succ.lag_us[k]);
      if (--waiting[c] == 0) ready.push_back(c);
    }
  }
  LUMOS_EXPECT(head == n, "replay: graph is not acyclic (" + std::to_string(n - head) +
                              " nodes never became ready)");
  r.makespan_us = makespan;
  return r;
}

}  // namespace lumos::replay
