#include "graph/graph.hpp"

#include <cmath>

#include "common/error.hpp"

namespace lumos::graph {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::kVirtual:
      return "virtual";
    case NodeKind::kCpuOp:
      return "cpu_op";
    case NodeKind::kRuntime:
      return "runtime";
    case NodeKind::kSync:
      return "sync";
    case NodeKind::kKernel:
      return "kernel";
    case NodeKind::kMemcpy:
      return "memcpy";
    case NodeKind::kMemset:
      return "memset";
    case NodeKind::kStepMarker:
      return "step";
  }
  return "?";
}

const char* to_string(NodeClass c) {
  switch (c) {
    case NodeClass::kVirtual:
      return "virtual";
    case NodeClass::kCpu:
      return "cpu";
    case NodeClass::kCompute:
      return "compute";
    case NodeClass::kComm:
      return "comm";
    case NodeClass::kMemory:
      return "memory";
  }
  return "?";
}

const char* to_string(EdgeKind k) {
  switch (k) {
    case EdgeKind::kOrigin:
      return "origin";
    case EdgeKind::kIntraThread:
      return "intra_thread";
    case EdgeKind::kInterThread:
      return "inter_thread";
    case EdgeKind::kLaunch:
      return "launch";
    case EdgeKind::kGpuToCpuSync:
      return "gpu_to_cpu_sync";
    case EdgeKind::kIntraStream:
      return "intra_stream";
    case EdgeKind::kInterStream:
      return "inter_stream";
    case EdgeKind::kCrossRank:
      return "cross_rank";
  }
  return "?";
}

Successors successors_of(const Graph& g) {
  const uint32_t n = g.num_nodes();
  Successors s;
  s.offset.assign(n + 1, 0);
  for (NodeId p : g.pred_index) ++s.offset[p + 1];
  for (uint32_t i = 0; i < n; ++i) s.offset[i + 1] += s.offset[i];
  s.index.resize(g.num_edges());
  s.lag_us.resize(g.num_edges());
  std::vector<uint32_t> fill(s.offset.begin(), s.offset.end() - 1);
  for (NodeId v = 0; v < n; ++v) {
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const uint32_t at = fill[g.pred_index[e]]++;
      s.index[at] = v;
      s.lag_us[at] = g.pred_lag_us[e];
    }
  }
  return s;
}

void validate(const Graph& g, const std::string& label) {
  // Every check reads only what the checks before it have shown to be in range, so that any
  // graph, however damaged, gets a message rather than an out-of-bounds read.
  auto bad = [&](const std::string& what) { throw InputError(label + ": invalid graph: " + what); };
  auto at = [](const char* array, size_t i) {
    return std::string(array) + "[" + std::to_string(i) + "]";
  };
  // Far beyond any trace (30 years), and small enough that sums over billions of nodes stay finite.
  constexpr double kMaxTimeUs = 1e15;
  auto time_ok = [&](double v) { return std::isfinite(v) && std::fabs(v) <= kMaxTimeUs; };

  const size_t n = g.kind.size();
  if (n == 0) bad("nodes: no nodes");
  if (n >= UINT32_MAX) bad("nodes: " + std::to_string(n) + " nodes exceed the 32-bit node ids");
  if (g.cls.size() != n || g.resource.size() != n || g.step.size() != n || g.name.size() != n ||
      g.event.size() != n || g.dur_us.size() != n || g.measured_start_us.size() != n)
    bad("nodes: per-node arrays differ in length");
  for (size_t v = 0; v < n; ++v) {
    if (static_cast<uint8_t>(g.kind[v]) > static_cast<uint8_t>(NodeKind::kStepMarker))
      bad("nodes: node " + std::to_string(v) + " has an unknown kind " +
          std::to_string(static_cast<unsigned>(g.kind[v])));
    if (static_cast<uint8_t>(g.cls[v]) > static_cast<uint8_t>(NodeClass::kMemory))
      bad("nodes: node " + std::to_string(v) + " has an unknown class " +
          std::to_string(static_cast<unsigned>(g.cls[v])));
  }

  const size_t e = g.pred_index.size();
  if (e > UINT32_MAX) bad("edges: " + std::to_string(e) + " edges exceed the 32-bit offsets");
  if (g.pred_offset.size() != n + 1)
    bad("edges: pred_offset has " + std::to_string(g.pred_offset.size()) + " entries, expected " +
        std::to_string(n + 1) + " (nodes + 1)");
  if (g.pred_offset[0] != 0)
    bad("edges: pred_offset[0] is " + std::to_string(g.pred_offset[0]) + ", not 0");
  for (size_t v = 0; v < n; ++v)
    if (g.pred_offset[v] > g.pred_offset[v + 1])
      bad("edges: " + at("pred_offset", v + 1) + " = " + std::to_string(g.pred_offset[v + 1]) +
          " is below " + at("pred_offset", v) + " = " + std::to_string(g.pred_offset[v]));
  if (g.pred_offset[n] != e)
    bad("edges: " + at("pred_offset", n) + " = " + std::to_string(g.pred_offset[n]) +
        " does not equal the " + std::to_string(e) + " edges");
  if (g.pred_lag_us.size() != e || g.pred_kind.size() != e)
    bad("edges: per-edge arrays differ in length");
  for (size_t i = 0; i < e; ++i) {
    if (static_cast<uint8_t>(g.pred_kind[i]) >= kNumEdgeKinds)
      bad("edges: edge " + std::to_string(i) + " has an unknown kind " +
          std::to_string(static_cast<unsigned>(g.pred_kind[i])));
    if (!time_ok(g.pred_lag_us[i]))
      bad("edges: edge " + std::to_string(i) + " has a lag that is not a finite time (" +
          std::to_string(g.pred_lag_us[i]) + " us)");
  }
  if (g.kind[kOrigin] != NodeKind::kVirtual || g.pred_offset[1] != 0)
    bad("nodes: node 0 is not the origin (a virtual node without predecessors)");

  if (g.wave_offset.size() < 2 || g.wave_offset.front() != 0 || g.wave_offset.back() != n)
    bad("waves: wave_offset does not span the nodes");
  for (size_t w = 0; w + 1 < g.wave_offset.size(); ++w)
    if (g.wave_offset[w] > g.wave_offset[w + 1])
      bad("waves: " + at("wave_offset", w + 1) + " = " + std::to_string(g.wave_offset[w + 1]) +
          " is below " + at("wave_offset", w) + " = " + std::to_string(g.wave_offset[w]));
  // Wavefront of each node, to check that every predecessor lies in an earlier wavefront.
  std::vector<uint32_t> wave(n, 0);
  for (size_t w = 0; w + 1 < g.wave_offset.size(); ++w)
    for (uint32_t v = g.wave_offset[w]; v < g.wave_offset[w + 1]; ++v)
      wave[v] = static_cast<uint32_t>(w);

  for (const Resource& r : g.resources)
    if (r.kind != ResourceKind::kThread && r.kind != ResourceKind::kStream)
      bad("resources: unknown resource kind");
  for (size_t v = 0; v < n; ++v) {
    const std::string node = "node " + std::to_string(v);
    if (v != kOrigin && g.pred_offset[v] == g.pred_offset[v + 1])
      bad("edges: " + node + " has no predecessor");
    if (!(g.dur_us[v] >= 0) || !time_ok(g.dur_us[v]))
      bad("nodes: " + node + " has a duration that is not a finite non-negative time (" +
          std::to_string(g.dur_us[v]) + " us)");
    if (!time_ok(g.measured_start_us[v]))
      bad("nodes: " + node + " has a measured start that is not a finite time");
    if (g.resource[v] != kNoResource && g.resource[v] >= g.resources.size())
      bad("nodes: " + node + " names resource " + std::to_string(g.resource[v]) + " of " +
          std::to_string(g.resources.size()));
    if (g.name[v] >= g.names.size())
      bad("nodes: " + node + " names name " + std::to_string(g.name[v]) + " of " +
          std::to_string(g.names.size()));
    if (g.step[v] < -1 || g.step[v] >= static_cast<int64_t>(g.steps.size()))
      bad("nodes: " + node + " names step " + std::to_string(g.step[v]) + " of " +
          std::to_string(g.steps.size()));
    if (g.event[v] < -1) bad("nodes: " + node + " has a negative source event index");
    for (uint32_t i = g.pred_offset[v]; i < g.pred_offset[v + 1]; ++i) {
      const NodeId p = g.pred_index[i];
      if (p >= v || wave[p] >= wave[v])
        bad("edges: edge " + std::to_string(p) + " -> " + std::to_string(v) +
            " breaks the topological order (a cycle or an unsorted file)");
    }
  }
  for (const Step& s : g.steps) {
    if (s.marker >= n)
      bad("steps: step " + std::to_string(&s - g.steps.data()) + " names a missing marker node");
    if (!(s.measured_us >= 0) || !time_ok(s.measured_us))
      bad("steps: step " + std::to_string(&s - g.steps.data()) +
          " has a measured time that is not a finite non-negative time");
  }
}

}  // namespace lumos::graph
