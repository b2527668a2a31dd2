#include "replay/gpu_idle.hpp"

#include <algorithm>
#include <cmath>

namespace lumos::replay {

using graph::EdgeKind;
using graph::Graph;
using graph::NodeClass;
using graph::NodeId;

IdleSplit& IdleSplit::operator+=(const IdleSplit& o) {
  idle_us += o.idle_us;
  host_us += o.host_us;
  sync_us += o.sync_us;
  dependency_us += o.dependency_us;
  truly_idle_us += o.truly_idle_us;
  gaps += o.gaps;
  return *this;
}

namespace {

bool is_gpu(NodeClass c) {
  return c == NodeClass::kCompute || c == NodeClass::kComm || c == NodeClass::kMemory;
}

// The predecessor edge that set v's start (the latest finish + lag), or UINT32_MAX when none
// reaches it (v started when its processor became free, or at a release time).
uint32_t binding_edge(const Graph& g, const ReplayResult& r, NodeId v) {
  uint32_t best = UINT32_MAX;
  double best_t = -INFINITY;
  for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
    const double t = r.finish_us[g.pred_index[e]] + g.pred_lag_us[e];
    if (t > best_t) best_t = t, best = e;
  }
  const double tol = 1e-6 * std::max(1.0, std::fabs(r.start_us[v]));
  return best != UINT32_MAX && best_t >= r.start_us[v] - tol ? best : UINT32_MAX;
}

enum class Cause { kHost, kSync, kDependency, kNoWork };

// What held `v`, the first GPU op after an idle gap that began at gap_us: follow the edges that
// set each start back while they reach into the gap. A synchronization on the way means the host
// could launch only once the GPU had drained; a launch, that the host was late; another stream's
// op or a rendezvous, a dependency.
Cause cause_of(const Graph& g, const ReplayResult& r, NodeId v, double gap_us) {
  NodeId cur = v;
  bool via_launch = false;
  for (int hops = 0; hops < 100000; ++hops) {
    if (g.kind[cur] == graph::NodeKind::kSync) return Cause::kSync;
    const uint32_t e = binding_edge(g, r, cur);
    if (e == UINT32_MAX) break;
    const EdgeKind k = g.pred_kind[e];
    const NodeId p = g.pred_index[e];
    if (k == EdgeKind::kGpuToCpuSync) return Cause::kSync;
    if (cur == v) {
      if (k == EdgeKind::kInterStream || k == EdgeKind::kCrossRank ||
          (g.cls[p] == NodeClass::kVirtual && p != graph::kOrigin))
        return Cause::kDependency;
      if (k != EdgeKind::kLaunch) return Cause::kNoWork;  // its stream's own recorded gap
      via_launch = true;
    }
    if (is_gpu(g.cls[p]) || p == graph::kOrigin || r.finish_us[p] <= gap_us) break;
    cur = p;
  }
  return via_launch ? Cause::kHost : Cause::kNoWork;
}

}  // namespace

IdleSplit gpu_idle_split(const Graph& g, const ReplayResult& r, const std::vector<NodeId>& nodes,
                         double begin_us, double end_us) {
  // GPU ops clipped to the window, by start; the union's holes are the idle gaps.
  std::vector<NodeId> ops;
  for (NodeId v : nodes)
    if (is_gpu(g.cls[v]) && r.finish_us[v] > begin_us && r.start_us[v] < end_us) ops.push_back(v);
  std::sort(ops.begin(), ops.end(), [&](NodeId a, NodeId b) {
    return r.start_us[a] < r.start_us[b] || (r.start_us[a] == r.start_us[b] && a < b);
  });
  IdleSplit s;
  auto add = [&](double from, double to, Cause c) {
    if (to <= from) return;
    const double d = to - from;
    s.idle_us += d;
    ++s.gaps;
    switch (c) {
      case Cause::kHost:
        s.host_us += d;
        break;
      case Cause::kSync:
        s.sync_us += d;
        break;
      case Cause::kDependency:
        s.dependency_us += d;
        break;
      case Cause::kNoWork:
        s.truly_idle_us += d;
        break;
    }
  };
  double busy_until = begin_us;
  for (NodeId v : ops) {
    const double st = std::max(r.start_us[v], begin_us);
    if (st > busy_until) add(busy_until, st, cause_of(g, r, v, busy_until));
    busy_until = std::max(busy_until, std::min(r.finish_us[v], end_us));
  }
  add(busy_until, end_us, Cause::kNoWork);  // after the last op: nothing left to run
  return s;
}

}  // namespace lumos::replay
