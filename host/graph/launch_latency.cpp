// The expected lags of launch and stream edges, measured in the trace itself rather than assumed:
// the lag an edge keeps when it does not explain its node's start (see assign_lags).
#include <algorithm>
#include <vector>

#include "common/stats.hpp"
#include "graph/trace_builder.hpp"

namespace lumos::graph::detail {

// A GPU op counts as launched onto an idle stream (HTA's rule) when its stream's previous op and
// any event it waited for had finished before the launch call began: its launch latency is the
// gap from the call's end. On a busy stream, the gap after the previous op is the kernel gap.
// Needs the inter-stream edges (add_stream_waits) and runs before the edges that use the medians.
void Builder::measure_launch_latency() {
  std::vector<int64_t> waited_until(nodes_.size(), kNoTime);
  for (const DEdge& e : edges_)
    if (e.kind == EdgeKind::kInterStream)
      waited_until[e.dst] = std::max(waited_until[e.dst], nodes_[e.src].finish());
  std::vector<double> idle_launch, busy_gap;
  for (uint32_t r = 0; r < resources_.size(); ++r) {
    if (resources_[r].kind != ResourceKind::kStream) continue;
    const auto& seq = res_nodes_[r];
    for (uint32_t i = 0; i < seq.size(); ++i) {
      const DNode& n = nodes_[seq[i]];
      if (n.launcher == kNone) continue;
      const DNode& l = nodes_[n.launcher];
      const int64_t prev_end = i > 0 ? nodes_[seq[i - 1]].finish() : kNoTime;
      const bool waited = waited_until[seq[i]] != kNoTime && waited_until[seq[i]] > l.s;
      if (waited) continue;
      if (prev_end == kNoTime || prev_end <= l.s)
        idle_launch.push_back(us(n.s - l.e));
      else
        busy_gap.push_back(us(std::max<int64_t>(0, n.s - prev_end)));
    }
  }
  stats_.launch_latency_us = median(idle_launch);
  stats_.kernel_gap_us = median(busy_gap);
}

}  // namespace lumos::graph::detail
