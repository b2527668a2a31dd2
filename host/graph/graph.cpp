#include "graph/graph.hpp"

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
  const uint32_t n = g.num_nodes();
  auto bad = [&](const std::string& what) { throw InputError(label + ": invalid graph: " + what); };
  if (n == 0) bad("no nodes");
  if (g.cls.size() != n || g.resource.size() != n || g.step.size() != n || g.name.size() != n ||
      g.event.size() != n || g.dur_us.size() != n || g.measured_start_us.size() != n)
    bad("per-node arrays differ in length");
  if (g.pred_offset.size() != n + 1 || g.pred_offset[0] != 0 || g.pred_offset[n] != g.num_edges())
    bad("pred_offset does not span the edges");
  if (g.pred_lag_us.size() != g.num_edges() || g.pred_kind.size() != g.num_edges())
    bad("per-edge arrays differ in length");
  if (g.kind[kOrigin] != NodeKind::kVirtual || g.pred_offset[1] != 0)
    bad("node 0 is not the origin");
  if (g.wave_offset.size() < 2 || g.wave_offset.front() != 0 || g.wave_offset.back() != n)
    bad("wave_offset does not span the nodes");
  for (NodeId v = 0; v < n; ++v)
    if (g.pred_offset[v] > g.pred_offset[v + 1])
      bad("pred_offset is not increasing at node " + std::to_string(v));
  for (const Resource& r : g.resources)
    if (r.kind != ResourceKind::kThread && r.kind != ResourceKind::kStream)
      bad("unknown resource kind");
  // Wavefront of each node, to check that every predecessor lies in an earlier wavefront.
  std::vector<uint32_t> wave(n, 0);
  for (uint32_t w = 0; w + 1 < g.wave_offset.size(); ++w) {
    if (g.wave_offset[w] > g.wave_offset[w + 1]) bad("wave_offset is not increasing");
    for (uint32_t v = g.wave_offset[w]; v < g.wave_offset[w + 1]; ++v) wave[v] = w;
  }
  for (NodeId v = 0; v < n; ++v) {
    if (v != kOrigin && g.pred_offset[v] == g.pred_offset[v + 1])
      bad("node " + std::to_string(v) + " has no predecessor");
    if (!(g.dur_us[v] >= 0)) bad("node " + std::to_string(v) + " has a negative or NaN duration");
    if (g.resource[v] != kNoResource && g.resource[v] >= g.resources.size())
      bad("node " + std::to_string(v) + " names a missing resource");
    if (g.name[v] >= g.names.size()) bad("node " + std::to_string(v) + " names a missing name");
    if (g.step[v] >= static_cast<int32_t>(g.steps.size()))
      bad("node " + std::to_string(v) + " names a missing step");
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const NodeId p = g.pred_index[e];
      if (p >= v || wave[p] >= wave[v])
        bad("edge " + std::to_string(p) + " -> " + std::to_string(v) +
            " breaks the topological order (a cycle or an unsorted file)");
      if (!(g.pred_lag_us[e] == g.pred_lag_us[e]))
        bad("edge into node " + std::to_string(v) + " has a NaN lag");
    }
  }
  for (const Step& s : g.steps)
    if (s.marker >= n) bad("step '" + s.name + "' names a missing marker node");
}

}  // namespace lumos::graph
