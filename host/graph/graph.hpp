// The core IR: an execution graph of one or more training steps, flattened for replay.
//
// Nodes are in topological order, renumbered so that each wavefront (nodes whose predecessors
// all lie in earlier wavefronts) is a contiguous range. Edges are a predecessor CSR with a lag per
// edge. Semantics: start(n) = max over preds p of finish(p) + lag(p->n); finish = start + dur.
// Node 0 is the origin (time 0 = the graph's t0); every other node has at least one predecessor.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lumos::graph {

using NodeId = uint32_t;
constexpr NodeId kOrigin = 0;
// The largest graph lumos builds, from a model or by editing a trace (about 10 s and 3 GiB).
constexpr uint64_t kMaxBuiltNodes = 20'000'000;
constexpr uint32_t kNoResource = UINT32_MAX;

enum class NodeKind : uint8_t {
  kVirtual,
  kCpuOp,
  kRuntime,
  kSync,
  kKernel,
  kMemcpy,
  kMemset,
  kStepMarker
};
enum class NodeClass : uint8_t { kVirtual, kCpu, kCompute, kComm, kMemory };
enum class EdgeKind : uint8_t {
  kOrigin,        // anchor or "resource free" time from the graph's t0
  kIntraThread,   // consecutive CPU work on one thread
  kInterThread,   // a thread woken by another thread's work (e.g. the autograd thread)
  kLaunch,        // runtime call -> the GPU op it enqueued (by correlation)
  kGpuToCpuSync,  // GPU op -> the CPU call that waited for it
  kIntraStream,   // consecutive GPU ops on one stream
  kInterStream,   // cudaEventRecord on one stream -> cudaStreamWaitEvent on another
  kCrossRank,     // collective rendezvous (multi-rank graphs)
};
constexpr int kNumEdgeKinds = 8;

const char* to_string(NodeKind k);
const char* to_string(NodeClass c);
const char* to_string(EdgeKind k);

enum class ResourceKind : uint8_t { kThread, kStream };

struct Resource {
  ResourceKind kind = ResourceKind::kThread;
  int32_t rank = 0;
  int64_t a = 0;  // thread: pid; stream: device
  int64_t b = 0;  // thread: tid; stream: stream id
};

struct Step {
  std::string name;  // ProfilerStep#N, or "trace" for a trace without steps
  int32_t rank = 0;
  NodeId marker = kOrigin;  // node whose start is the step's start
  double measured_us = 0;   // measured iteration time
};

struct Graph {
  // Per node (structure of arrays).
  std::vector<NodeKind> kind;
  std::vector<NodeClass> cls;
  std::vector<uint32_t> resource;  // index into resources, kNoResource for virtual nodes
  std::vector<int32_t> step;       // index into steps, -1 when outside every step
  std::vector<uint32_t> name;      // index into names
  std::vector<int64_t> event;      // source event index in the trace, -1 when synthetic
  std::vector<double> dur_us;
  std::vector<double> measured_start_us;  // effective measured start, relative to t0

  // Predecessor CSR.
  std::vector<uint32_t> pred_offset;  // size N + 1
  std::vector<NodeId> pred_index;
  std::vector<double> pred_lag_us;
  std::vector<EdgeKind> pred_kind;

  std::vector<uint32_t> wave_offset;  // size W + 1

  std::vector<Resource> resources;
  std::vector<std::string> names;
  std::vector<Step> steps;
  int64_t t0_ns = 0;  // trace time of the origin
  int32_t rank = 0;
  std::string source;  // trace path it was built from

  uint32_t num_nodes() const { return static_cast<uint32_t>(kind.size()); }
  uint32_t num_edges() const { return static_cast<uint32_t>(pred_index.size()); }
  uint32_t num_waves() const {
    return wave_offset.empty() ? 0 : static_cast<uint32_t>(wave_offset.size() - 1);
  }
  double measured_finish_us(NodeId n) const { return measured_start_us[n] + dur_us[n]; }
};

// Successor view of a graph's edges, for event-driven replay.
struct Successors {
  std::vector<uint32_t> offset;  // size N + 1
  std::vector<NodeId> index;
  std::vector<double> lag_us;
};
Successors successors_of(const Graph& g);

// Checks the structural invariants (sizes, topological order, wavefronts, origin); throws
// InputError naming the first violation. Used on graphs read from files.
void validate(const Graph& g, const std::string& label);

}  // namespace lumos::graph
