// Inside build_graph (graph_builder.hpp): the state of one build of a trace graph and its phases.
// Not for use outside host/graph/. Each phase lives in the file named for what it does:
//   graph_builder.cpp   the order of the phases, the step window, t0, flattening, step timing
//   trace_index.cpp     correlation indexes over the events, resources, steps of timestamps
//   trace_nodes.cpp     CPU and GPU nodes, blocking copies split into call and wait
//   trace_edges.cpp     dependency edges (sync, stream waits, thread, stream, origin) and lags
//   launch_latency.cpp  the expected lags of launch and stream edges, measured in the trace
//   match_keys.cpp      what transplant needs: match keys and resource-free edges
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/graph.hpp"
#include "graph/graph_builder.hpp"
#include "trace/event_table.hpp"
#include "trace/runtime_names.hpp"

namespace lumos::graph::detail {

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();
constexpr uint32_t kNone = UINT32_MAX;

struct ResKey {
  uint8_t kind;
  int64_t a, b;
  bool operator<(const ResKey& o) const {
    return std::tie(kind, a, b) < std::tie(o.kind, o.a, o.b);
  }
};

// A node before flattening. Times are trace nanoseconds.
struct DNode {
  NodeKind kind = NodeKind::kVirtual;
  NodeClass cls = NodeClass::kVirtual;
  uint32_t res = kNoResource;
  int32_t step = -1;
  uint32_t name = 0;
  int64_t event = -1;
  int64_t s = 0;     // measured start
  int64_t e = 0;     // measured end
  int64_t seff = 0;  // effective start (after waits and serial-processor clamping)
  uint32_t piece = 0;
  uint32_t parent = kNone;      // CPU nodes inside a top-level op: the op's name
  int64_t parent_event = -1;    // ... and its event
  int64_t launch_ts = kNoTime;  // GPU ops: start of the launching call
  uint32_t launcher = kNone;    // GPU ops: launching node
  uint32_t thread_pos = kNone;  // CPU nodes: position in their thread's sequence
  int64_t finish() const { return std::max(e, seff); }
};

struct DEdge {
  uint32_t src, dst;
  EdgeKind kind;
  double expected_lag_us;         // lag when this edge does not explain the start
  int64_t pred_finish = kNoTime;  // origin edges: the time the predecessor "finished"
};

inline double us(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

inline bool is_step_name(std::string_view n) {
  return n.substr(0, 13) == "ProfilerStep#";
}

class Builder {
 public:
  Builder(const trace::EventTable& t, const BuildOptions& o);
  BuildResult run();

 private:
  // A name's runtime role and whether it names a collective kernel, worked out once per name:
  // the phases ask for every call and kernel, and a trace repeats a few hundred names.
  trace::RuntimeRole role_of(uint32_t name) const { return name_role_[name]; }
  trace::RuntimeRole role_of(const trace::Event& e) const { return name_role_[e.name]; }
  bool is_comm(const trace::Event& e) const { return name_comm_[e.name] != 0; }

  // graph_builder.cpp
  void select_window();
  void place_origin();
  Graph flatten_draft(const std::vector<double>& lags, std::vector<NodeId>* new_id) const;
  void set_steps(Graph* g, const std::vector<NodeId>& new_id) const;

  // trace_index.cpp
  void index_events();
  uint32_t resource_id(uint8_t kind, int64_t a, int64_t b);
  int32_t step_of(int64_t ts) const;
  const trace::Event* runtime_by_corr(int64_t corr) const {
    auto it = runtime_event_.find(corr);
    return it == runtime_event_.end() ? nullptr : &t_.events[it->second];
  }

  // trace_nodes.cpp
  uint32_t add_node(const DNode& n) {
    nodes_.push_back(n);
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  void build_nodes();
  void build_cpu_nodes();
  void build_gpu_nodes();
  void split_blocking_copies();
  uint32_t last_launched_before(uint32_t stream_res, int64_t t) const;
  uint32_t first_launched_after(uint32_t stream_res, int64_t t) const;

  // trace_edges.cpp
  void add_gpu_to_cpu_syncs();
  void add_stream_waits();
  uint32_t last_record_before(uint32_t thread_res, uint32_t pos);
  void add_thread_edges();
  void add_stream_edges();
  void add_origin_edges();
  std::vector<double> assign_lags();

  // launch_latency.cpp
  void measure_launch_latency();

  // match_keys.cpp
  std::vector<MatchKey> match_keys(const std::vector<NodeId>& new_id, uint32_t num_nodes) const;
  std::vector<FreeEdge> free_edges(const std::vector<double>& lags,
                                   const std::vector<NodeId>& new_id) const;

  const trace::EventTable& t_;
  BuildOptions opt_;
  std::vector<trace::RuntimeRole> name_role_;  // by name id
  std::vector<uint8_t> name_comm_;             // by name id
  std::vector<TraceStep> steps_;
  int64_t wb_ = std::numeric_limits<int64_t>::min();  // the step window [wb_, we_)
  int64_t we_ = std::numeric_limits<int64_t>::max();
  int64_t t0_ = 0;
  bool in_window(int64_t ts) const { return ts >= wb_ && ts < we_; }

  std::vector<DNode> nodes_;
  std::vector<DEdge> edges_;
  std::map<ResKey, uint32_t> res_ids_;
  std::vector<Resource> resources_;
  std::vector<std::vector<uint32_t>> res_nodes_;         // per resource, nodes in execution order
  std::unordered_map<int64_t, uint32_t> runtime_event_;  // correlation -> event index
  std::unordered_map<int64_t, uint32_t> sync_event_;     // correlation -> cuda_sync event index
  std::unordered_map<int64_t, uint32_t> corr_node_;      // correlation -> runtime node
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> launch_order_;  // per stream resource
  std::map<int64_t, std::vector<std::pair<int64_t, uint32_t>>> thread_launches_;  // by thread res
  uint32_t marker_node_ = kNone;
  std::vector<uint32_t> step_markers_;
  bool has_sync_events_ = false;
  std::vector<ResourceFree> free_ns_;  // filled only with opt_.transplant_data
  std::unordered_map<uint32_t, std::vector<uint32_t>> last_record_;
  BuildStats stats_;
};

}  // namespace lumos::graph::detail
