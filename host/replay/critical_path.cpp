#include "replay/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace lumos::replay {

using graph::EdgeKind;
using graph::Graph;
using graph::NodeId;

namespace {

// Backtracks from `last` through the predecessor that set each start.
std::vector<NodeId> timing_path(const Graph& g, const ReplayResult& r, NodeId last) {
  std::vector<NodeId> path;
  NodeId v = last;
  while (v != graph::kOrigin) {
    path.push_back(v);
    // Among ties prefer the predecessor that finished last (work over lags), then the lowest id.
    NodeId pick = graph::kOrigin;
    double pick_finish = -INFINITY;
    const double tol = 1e-6 * std::max(1.0, std::fabs(r.start_us[v]));
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const NodeId p = g.pred_index[e];
      if (std::fabs(r.finish_us[p] + g.pred_lag_us[e] - r.start_us[v]) > tol) continue;
      if (r.finish_us[p] > pick_finish) {
        pick_finish = r.finish_us[p];
        pick = p;
      }
    }
    if (pick_finish == -INFINITY) {
      // Started when its processor became free: the previous node on the same resource.
      for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
        const NodeId p = g.pred_index[e];
        if (g.resource[p] == g.resource[v] && r.finish_us[p] > pick_finish) {
          pick_finish = r.finish_us[p];
          pick = p;
        }
      }
    }
    v = pick;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

bool is_blocking_call_name(const std::string& n) {
  // HTA's list of calls whose own span is waiting, not work.
  return n == "cudaDeviceSynchronize" || n == "cudaStreamSynchronize" || n == "cudaEventQuery" ||
         n == "cudaEventSynchronize" || n == "cudaMemcpy" || n == "cudaMemcpyAsync";
}

double node_weight(const Graph& g, const ReplayResult& r, NodeId v) {
  if (g.kind[v] == graph::NodeKind::kSync) return 0.0;
  if (g.kind[v] == graph::NodeKind::kRuntime && is_blocking_call_name(g.names[g.name[v]]))
    return 0.0;
  return r.finish_us[v] - r.start_us[v];
}

bool sets_start(const Graph& g, const ReplayResult& r, uint32_t e, NodeId v) {
  const NodeId p = g.pred_index[e];
  return std::fabs(r.finish_us[p] + g.pred_lag_us[e] - r.start_us[v]) <=
         1e-6 * std::max(1.0, std::fabs(r.start_us[v]));
}

// HTA's kernel-to-kernel edges stop at this gap (KERNEL_KERNEL_DELAY_THRESHOLD_US): a longer one
// is an unrecognised dependency, not overhead.
constexpr double kHtaKernelGapLimitUs = 1500;

// HTA gives a GPU op a launch-delay edge only when its stream was idle (the launch set its
// start); otherwise a kernel-to-kernel edge from the previous op on the stream, unless the op
// waited for another stream's event that finished after that previous op.
bool hta_has_edge(const Graph& g, const ReplayResult& r, uint32_t e, NodeId v) {
  const EdgeKind k = g.pred_kind[e];
  if (k != EdgeKind::kLaunch && k != EdgeKind::kIntraStream) return true;
  bool launch_sets = false;
  double waited_until = -INFINITY;
  for (uint32_t f = g.pred_offset[v]; f < g.pred_offset[v + 1]; ++f) {
    if (g.pred_kind[f] == EdgeKind::kLaunch && sets_start(g, r, f, v)) launch_sets = true;
    if (g.pred_kind[f] == EdgeKind::kInterStream)
      waited_until = std::max(waited_until, r.finish_us[g.pred_index[f]]);
  }
  if (k == EdgeKind::kLaunch) return launch_sets;
  const NodeId p = g.pred_index[e];
  return !launch_sets && waited_until <= r.finish_us[p] &&
         r.start_us[v] - r.finish_us[p] < kHtaKernelGapLimitUs;
}

double edge_weight(const Graph& g, const ReplayResult& r, uint32_t e, NodeId p, NodeId v) {
  switch (g.pred_kind[e]) {
    case EdgeKind::kOrigin:
    case EdgeKind::kIntraThread:  // gaps between top-level operators are not work
    case EdgeKind::kGpuToCpuSync:
    case EdgeKind::kInterStream:
      return 0.0;
    default:
      return std::max(0.0, r.start_us[v] - r.finish_us[p]);
  }
}

// Longest path by HTA's weights; nodes are in topological order, so one forward pass does.
std::vector<NodeId> hta_path(const Graph& g, const ReplayResult& r, int32_t step, double* weight) {
  const uint32_t n = g.num_nodes();
  std::vector<double> dist(n, -INFINITY);  // best weight of a path ending at v (v included)
  std::vector<NodeId> from(n, graph::kOrigin);
  auto in = [&](NodeId v) { return v != graph::kOrigin && (step < 0 || g.step[v] == step); };
  NodeId best = graph::kOrigin;
  double best_w = -INFINITY;
  for (NodeId v = 1; v < n; ++v) {
    if (!in(v)) continue;
    double d = 0;
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const NodeId p = g.pred_index[e];
      if (!in(p) || !hta_has_edge(g, r, e, v)) continue;
      const double cand = dist[p] + edge_weight(g, r, e, p, v);
      // Ties go to the later-finishing predecessor, as in the timing convention.
      if (cand > d ||
          (cand == d && from[v] != graph::kOrigin && r.finish_us[p] > r.finish_us[from[v]])) {
        d = cand;
        from[v] = p;
      }
    }
    dist[v] = d + node_weight(g, r, v);
    if (dist[v] > best_w || (dist[v] == best_w && r.finish_us[v] > r.finish_us[best])) {
      best_w = dist[v];
      best = v;
    }
  }
  std::vector<NodeId> path;
  for (NodeId v = best; v != graph::kOrigin; v = from[v]) path.push_back(v);
  std::reverse(path.begin(), path.end());
  *weight = best_w == -INFINITY ? 0.0 : best_w;
  return path;
}

}  // namespace

CriticalPath critical_path(const Graph& g, const ReplayResult& r, int32_t step,
                           CriticalPathMode mode) {
  CriticalPath cp;
  cp.mode = mode;
  if (mode == CriticalPathMode::kTiming) {
    NodeId last = graph::kOrigin;
    double best = -INFINITY;
    for (NodeId v = 1; v < g.num_nodes(); ++v) {
      if (step >= 0 && g.step[v] != step) continue;
      if (r.finish_us[v] > best) {
        best = r.finish_us[v];
        last = v;
      }
    }
    if (last == graph::kOrigin) return cp;
    cp.nodes = timing_path(g, r, last);
  } else {
    cp.nodes = hta_path(g, r, step, &cp.weight_us);
  }
  if (cp.nodes.empty()) return cp;
  // Each node counts until the next one starts: a GPU op may start before the call that
  // launched it returns (a blocking copy from pageable memory), and the time they share is the
  // path's once, so the parts and the gaps add up to its length.
  double parts_us = 0;
  for (size_t i = 0; i < cp.nodes.size(); ++i) {
    const NodeId v = cp.nodes[i];
    const double end = i + 1 < cp.nodes.size()
                           ? std::min(r.finish_us[v], r.start_us[cp.nodes[i + 1]])
                           : r.finish_us[v];
    const double us = std::max(0.0, end - r.start_us[v]);
    cp.by_class_us[static_cast<int>(g.cls[v])] += us;
    parts_us += us;
    if (i > 0) cp.lag_us += std::max(0.0, r.start_us[v] - r.finish_us[cp.nodes[i - 1]]);
  }
  if (mode == CriticalPathMode::kTiming) cp.weight_us = parts_us + cp.lag_us;
  cp.length_us = r.finish_us[cp.nodes.back()] - r.start_us[cp.nodes.front()];
  return cp;
}

}  // namespace lumos::replay
