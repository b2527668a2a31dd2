#include "graph/graph_builder.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "graph/flatten.hpp"
#include "trace/runtime_names.hpp"

namespace lumos::graph {
namespace {

using trace::Event;
using trace::EventKind;
using trace::EventTable;
using trace::RuntimeRole;
using trace::SyncKind;

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();
constexpr uint32_t kNone = UINT32_MAX;

bool is_step_name(std::string_view n) {
  return n.substr(0, 13) == "ProfilerStep#";
}

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

double us(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

class Builder {
 public:
  Builder(const EventTable& t, const BuildOptions& o) : t_(t), opt_(o) {}
  BuildResult run();

 private:
  uint32_t add_node(const DNode& n) {
    nodes_.push_back(n);
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  uint32_t resource_id(uint8_t kind, int64_t a, int64_t b);
  bool in_window(int64_t ts) const { return ts >= wb_ && ts < we_; }
  int32_t step_of(int64_t ts) const;
  void build_cpu_nodes();
  void build_gpu_nodes();
  void split_blocking_copies();
  void add_thread_edges();
  void add_stream_edges();
  void add_stream_waits();
  uint32_t last_record_before(uint32_t thread_res, uint32_t pos);
  void add_gpu_to_cpu_syncs();
  void add_origin_edges();
  void assign_lags(std::vector<double>* lags);
  uint32_t last_launched_before(uint32_t stream_res, int64_t t) const;
  uint32_t first_launched_after(uint32_t stream_res, int64_t t) const;
  const Event* runtime_by_corr(int64_t corr) const {
    auto it = runtime_event_.find(corr);
    return it == runtime_event_.end() ? nullptr : &t_.events[it->second];
  }

  const EventTable& t_;
  BuildOptions opt_;
  std::vector<TraceStep> steps_;
  int64_t wb_ = std::numeric_limits<int64_t>::min();
  int64_t we_ = std::numeric_limits<int64_t>::max();
  int64_t t0_ = 0;

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
  std::vector<uint8_t> is_sync_node_;
  uint32_t marker_node_ = kNone;
  std::vector<uint32_t> step_markers_;
  bool has_sync_events_ = false;
  std::vector<ResourceFree> free_ns_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> last_record_;
  BuildStats stats_;
};

uint32_t Builder::resource_id(uint8_t kind, int64_t a, int64_t b) {
  ResKey k{kind, a, b};
  auto it = res_ids_.find(k);
  if (it != res_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(resources_.size());
  Resource r;
  r.kind = static_cast<ResourceKind>(kind);
  r.rank = std::max(0, t_.rank);
  r.a = a;
  r.b = b;
  resources_.push_back(r);
  res_nodes_.emplace_back();
  launch_order_.emplace_back();
  res_ids_.emplace(k, id);
  return id;
}

int32_t Builder::step_of(int64_t ts) const {
  // Steps are sorted; the window of step k is [begin_k, end_k).
  auto it = std::upper_bound(steps_.begin(), steps_.end(), ts,
                             [](int64_t v, const TraceStep& s) { return v < s.begin_ns; });
  if (it == steps_.begin()) return -1;
  const auto k = static_cast<int32_t>(it - steps_.begin() - 1);
  if (ts >= steps_[k].end_ns) return -1;
  return opt_.window_step >= 0 ? 0 : k;
}

// CPU threads: top-level operators split into pieces around the runtime calls they contain, so
// that a runtime call that waits (a sync) delays the rest of its operator.
void Builder::build_cpu_nodes() {
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < t_.events.size(); ++i) {
    const Event& e = t_.events[i];
    const bool marker = (e.kind == EventKind::kUserAnnotation || e.kind == EventKind::kCpuOp) &&
                        is_step_name(t_.name_of(e));
    if (e.kind != EventKind::kCpuOp && e.kind != EventKind::kRuntime && !marker) continue;
    if (!in_window(e.ts_ns)) continue;
    by_thread[{e.pid, e.tid}].push_back(i);
  }
  for (auto& [thread, evs] : by_thread) {
    std::stable_sort(evs.begin(), evs.end(), [&](uint32_t x, uint32_t y) {
      const Event& a = t_.events[x];
      const Event& b = t_.events[y];
      if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
      const bool am = is_step_name(t_.name_of(a)), bm = is_step_name(t_.name_of(b));
      if (am != bm) return am;     // step markers first
      return a.dur_ns > b.dur_ns;  // parents before children
    });
    const uint32_t res =
        resource_id(static_cast<uint8_t>(ResourceKind::kThread), thread.first, thread.second);
    // The open top-level operator, and the time up to which it has been emitted.
    const Event* top = nullptr;
    uint32_t top_event = 0;
    int64_t cursor = 0;
    uint32_t pieces = 0;
    uint32_t last_runtime = kNone;
    auto emit = [&](NodeKind kind, uint32_t name, int64_t ev, int64_t s, int64_t e, uint32_t piece,
                    const Event* parent = nullptr, int64_t parent_event = -1) {
      DNode n;
      n.kind = kind;
      n.cls = NodeClass::kCpu;
      n.res = res;
      n.step = step_of(s);
      n.name = name;
      n.event = ev;
      n.s = s;
      n.e = std::max(s, e);
      n.seff = s;
      n.piece = piece;
      if (parent) {
        n.parent = parent->name;
        n.parent_event = parent_event;
      }
      n.thread_pos = static_cast<uint32_t>(res_nodes_[res].size());
      const uint32_t id = add_node(n);
      res_nodes_[res].push_back(id);
      return id;
    };
    auto close_top = [&]() {
      if (!top) return;
      if (top->end_ns() > cursor || pieces == 0)
        emit(NodeKind::kCpuOp, top->name, top_event, cursor, top->end_ns(), pieces, top, top_event);
      top = nullptr;
    };
    for (uint32_t idx : evs) {
      const Event& e = t_.events[idx];
      if (is_step_name(t_.name_of(e))) {
        close_top();
        const uint32_t id = emit(NodeKind::kStepMarker, e.name, idx, e.ts_ns, e.ts_ns, 0);
        step_markers_.push_back(id);
        continue;
      }
      if (e.kind == EventKind::kCpuOp) {
        if (top && e.ts_ns < top->end_ns()) continue;  // nested operator: part of the top one
        close_top();
        top = &e;
        top_event = idx;
        cursor = e.ts_ns;
        pieces = 0;
        continue;
      }
      // Runtime call. A call nested in the previous call (driver under runtime) is the same node.
      if (last_runtime != kNone && e.ts_ns < nodes_[last_runtime].e) {
        if (e.correlation >= 0) corr_node_.emplace(e.correlation, last_runtime);
        continue;
      }
      if (top && e.ts_ns < top->end_ns()) {
        if (e.ts_ns > cursor)
          emit(NodeKind::kCpuOp, top->name, top_event, cursor, e.ts_ns, pieces++, top, top_event);
        last_runtime = emit(NodeKind::kRuntime, e.name, idx, std::max(e.ts_ns, cursor), e.end_ns(),
                            0, top, top_event);
        cursor = std::max(cursor, e.end_ns());
      } else {
        close_top();
        last_runtime = emit(NodeKind::kRuntime, e.name, idx, e.ts_ns, e.end_ns(), 0);
      }
      if (e.correlation >= 0) corr_node_[e.correlation] = last_runtime;
    }
    close_top();
  }
}

void Builder::build_gpu_nodes() {
  std::map<uint32_t, std::vector<uint32_t>> by_stream;  // resource -> event indices
  for (uint32_t i = 0; i < t_.events.size(); ++i) {
    const Event& e = t_.events[i];
    if (!e.is_gpu_op()) continue;
    auto it = e.correlation >= 0 ? corr_node_.find(e.correlation) : corr_node_.end();
    const bool launched_in_trace = e.correlation >= 0 && runtime_event_.count(e.correlation);
    if (it == corr_node_.end()) {
      // Launched outside this graph. GPU work whose launch is not in the trace at all was
      // enqueued before profiling began: a node of the whole trace, but only backlog for a step.
      if (launched_in_trace || opt_.window_step >= 0) continue;
    }
    const uint32_t res =
        resource_id(static_cast<uint8_t>(ResourceKind::kStream), e.device, e.stream);
    by_stream[res].push_back(i);
  }
  for (auto& [res, evs] : by_stream) {
    std::stable_sort(evs.begin(), evs.end(), [&](uint32_t x, uint32_t y) {
      return t_.events[x].ts_ns < t_.events[y].ts_ns;
    });
    int64_t prev_end = kNoTime;
    for (uint32_t idx : evs) {
      const Event& e = t_.events[idx];
      DNode n;
      n.kind = e.kind == EventKind::kKernel   ? NodeKind::kKernel
               : e.kind == EventKind::kMemcpy ? NodeKind::kMemcpy
                                              : NodeKind::kMemset;
      n.cls = e.kind == EventKind::kKernel
                  ? (trace::is_comm_kernel(t_.name_of(e)) ? NodeClass::kComm : NodeClass::kCompute)
                  : NodeClass::kMemory;
      n.res = res;
      n.name = e.name;
      n.event = idx;
      n.s = e.ts_ns;
      n.e = e.end_ns();
      n.seff = prev_end == kNoTime ? e.ts_ns : std::max(e.ts_ns, prev_end);
      auto it = e.correlation >= 0 ? corr_node_.find(e.correlation) : corr_node_.end();
      if (it != corr_node_.end()) {
        n.launcher = it->second;
        n.launch_ts = nodes_[it->second].s;
        n.step = nodes_[it->second].step;
      } else {
        ++stats_.gpu_ops_without_launch;
        n.launch_ts = e.ts_ns;
        n.step = step_of(e.ts_ns);
      }
      prev_end = std::max(prev_end, n.finish());
      const uint32_t id = add_node(n);
      res_nodes_[res].push_back(id);
      launch_order_[res].push_back({n.launch_ts, id});
      if (n.launcher != kNone)
        thread_launches_[nodes_[n.launcher].res].push_back({n.launch_ts, id});
    }
  }
  for (auto& lo : launch_order_) std::stable_sort(lo.begin(), lo.end());
  for (auto& [r, tl] : thread_launches_) std::stable_sort(tl.begin(), tl.end());
}

uint32_t Builder::last_launched_before(uint32_t stream_res, int64_t t) const {
  const auto& lo = launch_order_[stream_res];
  auto it = std::lower_bound(lo.begin(), lo.end(), std::make_pair(t, uint32_t{0}));
  if (it == lo.begin()) return kNone;
  return std::prev(it)->second;
}

uint32_t Builder::first_launched_after(uint32_t stream_res, int64_t t) const {
  const auto& lo = launch_order_[stream_res];
  auto it = std::upper_bound(lo.begin(), lo.end(), std::make_pair(t, kNone));
  return it == lo.end() ? kNone : it->second;
}

// A copy call that returns only after its copy finished waits for it: split the call into the
// part that enqueues the copy and a sync node that waits for it.
void Builder::split_blocking_copies() {
  const uint32_t n_before = static_cast<uint32_t>(nodes_.size());
  // How long enqueuing takes: the median duration of calls that launched GPU work and returned.
  std::vector<double> enqueue;
  for (uint32_t g = 0; g < n_before; ++g) {
    const DNode& op = nodes_[g];
    if (op.launcher == kNone || nodes_[op.launcher].kind != NodeKind::kRuntime) continue;
    const DNode& call = nodes_[op.launcher];
    if (trace::runtime_role(t_.names[call.name]) == RuntimeRole::kLaunch)
      enqueue.push_back(static_cast<double>(call.e - call.s));
  }
  const auto enqueue_ns = static_cast<int64_t>(median(enqueue));
  std::vector<std::pair<uint32_t, uint32_t>> inserts;  // (call node, wait node)
  for (uint32_t g = 0; g < n_before; ++g) {
    const DNode& op = nodes_[g];
    if (op.kind != NodeKind::kMemcpy || op.launcher == kNone) continue;
    const DNode& call = nodes_[op.launcher];
    if (call.kind != NodeKind::kRuntime) continue;
    if (trace::runtime_role(t_.names[call.name]) != RuntimeRole::kBlockingMemcpy) continue;
    const int64_t tol = static_cast<int64_t>(opt_.sync_tolerance_us * 1000);
    if (!(op.e > call.s && op.e <= call.e + tol && op.s >= call.s)) continue;
    const uint32_t call_id = op.launcher;
    DNode wait = call;
    wait.kind = NodeKind::kSync;
    wait.piece = 1;
    // The call enqueues the copy (as long as a launch takes), then waits for it to finish; a copy
    // that started late waited for its stream, not for the call.
    const int64_t split = std::min(std::clamp(op.s, call.s, call.e), call.s + enqueue_ns);
    nodes_[call_id].e = split;
    wait.s = split;
    wait.seff = std::max(split, op.finish());
    const uint32_t wid = add_node(wait);
    is_sync_node_.resize(nodes_.size(), 0);
    is_sync_node_[wid] = 1;
    edges_.push_back({g, wid, EdgeKind::kGpuToCpuSync, 0.0});
    inserts.push_back({call_id, wid});
  }
  // Put each wait node right after its call, one pass per thread.
  std::unordered_map<uint32_t, std::vector<uint32_t>>
      wait_after;  // a call may wait for several copies
  for (auto [call_id, wid] : inserts) wait_after[call_id].push_back(wid);
  if (!wait_after.empty()) {
    for (auto& seq : res_nodes_) {
      std::vector<uint32_t> out;
      out.reserve(seq.size());
      for (uint32_t id : seq) {
        out.push_back(id);
        auto it = wait_after.find(id);
        if (it != wait_after.end()) out.insert(out.end(), it->second.begin(), it->second.end());
      }
      seq.swap(out);
    }
  }
  for (auto& seq : res_nodes_)
    for (uint32_t i = 0; i < seq.size(); ++i)
      if (nodes_[seq[i]].cls == NodeClass::kCpu) nodes_[seq[i]].thread_pos = i;
}

// The thread's latest cudaEventRecord before position pos in its sequence (kNone if none).
uint32_t Builder::last_record_before(uint32_t thread_res, uint32_t pos) {
  auto it = last_record_.find(thread_res);
  if (it == last_record_.end()) {
    // One pass per thread: at each position, the latest record strictly before it.
    const auto& seq = res_nodes_[thread_res];
    std::vector<uint32_t> v(seq.size() + 1, kNone);
    for (uint32_t i = 0; i < seq.size(); ++i) {
      const DNode& c = nodes_[seq[i]];
      const bool rec = c.kind == NodeKind::kRuntime && c.event >= 0 &&
                       trace::runtime_role(t_.names[c.name]) == RuntimeRole::kEventRecord;
      v[i + 1] = rec ? seq[i] : v[i];
    }
    it = last_record_.emplace(thread_res, std::move(v)).first;
  }
  return pos < it->second.size() ? it->second[pos] : kNone;
}

void Builder::add_stream_waits() {
  const int64_t tol = static_cast<int64_t>(opt_.sync_tolerance_us * 1000);
  auto add = [&](uint32_t src, uint32_t dst) {
    if (src == kNone || dst == kNone || src == dst) return;
    if (nodes_[src].res == nodes_[dst].res) return;          // same stream: already ordered
    if (nodes_[src].finish() > nodes_[dst].s + tol) return;  // contradicts the measured order
    edges_.push_back({src, dst, EdgeKind::kInterStream, 0.0});
  };
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    const DNode& call = nodes_[n];
    if (call.kind != NodeKind::kRuntime || call.event < 0) continue;
    const Event& ce = t_.events[call.event];
    if (trace::runtime_role(t_.name_of(ce)) != RuntimeRole::kStreamWaitEvent) continue;
    auto sit = ce.correlation >= 0 ? sync_event_.find(ce.correlation) : sync_event_.end();
    if (sit != sync_event_.end() && t_.events[sit->second].sync == SyncKind::kStreamWaitEvent) {
      const Event& se = t_.events[sit->second];
      const Event* rec = runtime_by_corr(se.wait_on_record_corr);
      if (!rec || se.wait_on_stream < 0 || se.stream < 0) continue;
      auto src_res = res_ids_.find(
          {static_cast<uint8_t>(ResourceKind::kStream), se.device, se.wait_on_stream});
      auto dst_res =
          res_ids_.find({static_cast<uint8_t>(ResourceKind::kStream), se.device, se.stream});
      if (src_res == res_ids_.end() || dst_res == res_ids_.end()) continue;
      add(last_launched_before(src_res->second, rec->ts_ns),
          first_launched_after(dst_res->second, ce.ts_ns));
      continue;
    }
    if (has_sync_events_) continue;  // the trace records waits; this one had no stream info
    // Older traces: the record's stream is that of the thread's previous launch, the wait's that
    // of its next launch; pair the wait with the thread's latest record before it.
    const uint32_t rec_node = last_record_before(call.res, call.thread_pos);
    if (rec_node == kNone) continue;
    auto tl = thread_launches_.find(call.res);
    if (tl == thread_launches_.end()) continue;
    const auto& launches = tl->second;
    auto before = std::lower_bound(launches.begin(), launches.end(),
                                   std::make_pair(nodes_[rec_node].s, uint32_t{0}));
    auto after = std::upper_bound(launches.begin(), launches.end(), std::make_pair(call.s, kNone));
    if (before == launches.begin() || after == launches.end()) continue;
    const uint32_t src = std::prev(before)->second;
    const uint32_t dst = after->second;
    // The record must belong to the source's stream: the source is that stream's last launch.
    if (last_launched_before(nodes_[src].res, nodes_[rec_node].s) != src) continue;
    add(src, dst);
  }
}

void Builder::add_gpu_to_cpu_syncs() {
  const int64_t tol = static_cast<int64_t>(opt_.sync_tolerance_us * 1000);
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    DNode& call = nodes_[n];
    if (call.kind != NodeKind::kRuntime || call.event < 0) continue;
    const Event& ce = t_.events[call.event];
    const RuntimeRole role = trace::runtime_role(t_.name_of(ce));
    std::vector<uint32_t> sources;
    auto sit = ce.correlation >= 0 ? sync_event_.find(ce.correlation) : sync_event_.end();
    const Event* se = sit != sync_event_.end() ? &t_.events[sit->second] : nullptr;
    auto stream_res = [&](int64_t dev, int64_t stream) {
      auto it = res_ids_.find({static_cast<uint8_t>(ResourceKind::kStream), dev, stream});
      return it == res_ids_.end() ? kNone : it->second;
    };
    auto all_streams = [&](int64_t dev) {
      for (uint32_t r = 0; r < resources_.size(); ++r)
        if (resources_[r].kind == ResourceKind::kStream && (dev < 0 || resources_[r].a == dev))
          sources.push_back(last_launched_before(r, ce.ts_ns));
    };
    if (se && se->sync == SyncKind::kContext) {
      all_streams(se->device);
    } else if (se && se->sync == SyncKind::kStream) {
      const uint32_t r = stream_res(se->device, se->stream);
      if (r != kNone) sources.push_back(last_launched_before(r, ce.ts_ns));
    } else if (se && se->sync == SyncKind::kEvent) {
      const Event* rec = runtime_by_corr(se->wait_on_record_corr);
      const uint32_t r = stream_res(se->device, se->wait_on_stream);
      if (rec && r != kNone) sources.push_back(last_launched_before(r, rec->ts_ns));
    } else if (!se && (role == RuntimeRole::kStreamSync || role == RuntimeRole::kDeviceSync ||
                       role == RuntimeRole::kEventSync)) {
      // No cuda_sync record: the call may have waited on any stream's latest work.
      all_streams(-1);
    } else {
      continue;
    }
    call.kind = NodeKind::kSync;
    is_sync_node_.resize(nodes_.size(), 0);
    is_sync_node_[n] = 1;
    for (uint32_t src : sources) {
      if (src == kNone) continue;
      if (nodes_[src].finish() > call.e + tol) continue;  // still running when the call returned
      edges_.push_back({src, n, EdgeKind::kGpuToCpuSync, 0.0});
      // The call starts, in effect, when the GPU work it waits for is done.
      call.seff = std::max(call.seff, nodes_[src].finish());
    }
  }
}

void Builder::add_thread_edges() {
  // Intra-thread chains. The expected lag of a chain edge is the measured gap (CPU time that
  // does not depend on anything else), except where another thread explains the gap.
  struct End {
    int64_t e;
    uint32_t node;
  };
  std::map<int64_t, std::vector<End>> ends_by_pid;  // CPU node ends per process, sorted
  for (uint32_t r = 0; r < resources_.size(); ++r) {
    if (resources_[r].kind != ResourceKind::kThread) continue;
    for (uint32_t id : res_nodes_[r]) ends_by_pid[resources_[r].a].push_back({nodes_[id].e, id});
  }
  for (auto& [pid, v] : ends_by_pid)
    std::sort(v.begin(), v.end(), [](const End& x, const End& y) { return x.e < y.e; });
  const int64_t min_gap = static_cast<int64_t>(opt_.inter_thread_min_gap_us * 1000);
  const int64_t window = static_cast<int64_t>(opt_.inter_thread_window_us * 1000);

  for (uint32_t r = 0; r < resources_.size(); ++r) {
    if (resources_[r].kind != ResourceKind::kThread) continue;
    const auto& seq = res_nodes_[r];
    const auto& ends = ends_by_pid[resources_[r].a];
    for (uint32_t i = 0; i < seq.size(); ++i) {
      DNode& n = nodes_[seq[i]];
      const int64_t prev_end = i > 0 ? nodes_[seq[i - 1]].finish() : kNoTime;
      if (prev_end != kNoTime) n.seff = std::max(n.seff, prev_end);
      // Inter-thread: the latest end of another thread's work in (prev_end, s], close to s.
      uint32_t waker = kNone;
      if (n.kind != NodeKind::kStepMarker && (prev_end == kNoTime || n.s - prev_end >= min_gap)) {
        auto it = std::upper_bound(ends.begin(), ends.end(), n.s,
                                   [](int64_t v, const End& x) { return v < x.e; });
        while (it != ends.begin()) {
          --it;
          if (prev_end != kNoTime && it->e <= prev_end) break;
          if (n.s - it->e > window) break;
          if (nodes_[it->node].res != r) {
            waker = it->node;
            break;
          }
        }
      }
      if (i > 0) {
        const double gap = waker != kNone ? 0.0 : us(std::max<int64_t>(0, n.s - prev_end));
        edges_.push_back({seq[i - 1], seq[i], EdgeKind::kIntraThread, gap});
      }
      if (waker != kNone) edges_.push_back({waker, seq[i], EdgeKind::kInterThread, 0.0});
    }
  }
}

void Builder::add_stream_edges() {
  for (uint32_t r = 0; r < resources_.size(); ++r) {
    if (resources_[r].kind != ResourceKind::kStream) continue;
    const auto& seq = res_nodes_[r];
    for (uint32_t i = 0; i < seq.size(); ++i) {
      const DNode& n = nodes_[seq[i]];
      if (i > 0)
        edges_.push_back({seq[i - 1], seq[i], EdgeKind::kIntraStream, stats_.kernel_gap_us});
      if (n.launcher != kNone)
        edges_.push_back({n.launcher, seq[i], EdgeKind::kLaunch, stats_.launch_latency_us});
    }
  }
}

void Builder::add_origin_edges() {
  std::vector<uint8_t> has_pred(nodes_.size(), 0);
  for (const DEdge& e : edges_) has_pred[e.dst] = 1;
  // Resource-free edges of a one-step graph: each thread and stream is busy until its last
  // activity outside the step ended.
  if (opt_.window_step >= 0) {
    std::vector<int64_t> free(resources_.size(), kNoTime);
    for (uint32_t i = 0; i < t_.events.size(); ++i) {
      const Event& e = t_.events[i];
      if (e.is_gpu_op()) {
        auto it = res_ids_.find({static_cast<uint8_t>(ResourceKind::kStream), e.device, e.stream});
        if (it == res_ids_.end()) continue;
        // Work launched before the step (backlog); a launch inside the step is the step's own.
        const Event* l = e.correlation >= 0 ? runtime_by_corr(e.correlation) : nullptr;
        const int64_t launched = l ? l->ts_ns : std::numeric_limits<int64_t>::min();
        if (launched < wb_) free[it->second] = std::max(free[it->second], e.end_ns());
      } else if (e.kind == EventKind::kCpuOp || e.kind == EventKind::kRuntime) {
        auto it = res_ids_.find({static_cast<uint8_t>(ResourceKind::kThread), e.pid, e.tid});
        if (it == res_ids_.end() || e.ts_ns >= wb_) continue;
        free[it->second] = std::max(free[it->second], e.end_ns());
      }
    }
    for (uint32_t r = 0; r < resources_.size(); ++r) {
      if (free[r] == kNoTime) continue;
      free_ns_.push_back(
          {static_cast<uint8_t>(resources_[r].kind), resources_[r].a, resources_[r].b, free[r]});
      if (res_nodes_[r].empty()) continue;
      const uint32_t first = res_nodes_[r].front();
      if (first == marker_node_) continue;
      DNode& n = nodes_[first];
      n.seff = std::max(n.seff, std::min(free[r], n.e));
      // A thread's gap after it became free is its own CPU time, unless another thread's work
      // already explains the start (then the gap was waiting).
      const double expected = resources_[r].kind == ResourceKind::kStream ? stats_.kernel_gap_us
                              : has_pred[first]                           ? 0.0
                                                : us(std::max<int64_t>(0, n.s - free[r]));
      edges_.push_back({0, first, EdgeKind::kOrigin, expected, free[r]});
      has_pred[first] = 1;
    }
  }
  for (uint32_t n = 1; n < nodes_.size(); ++n) {
    if (has_pred[n] && n != marker_node_) continue;
    edges_.push_back({0, n, EdgeKind::kOrigin, 0.0, t0_});
  }
}

// The binding rule: the predecessor with the largest finish + expected lag explains the start
// and keeps the measured gap; the others keep min(expected lag, slack).
void Builder::assign_lags(std::vector<double>* lags) {
  std::vector<uint32_t> order(edges_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return edges_[x].dst < edges_[y].dst; });
  lags->assign(edges_.size(), 0.0);
  auto pred_finish = [&](const DEdge& e) {
    return e.pred_finish != kNoTime ? e.pred_finish : nodes_[e.src].finish();
  };
  size_t i = 0;
  while (i < order.size()) {
    size_t j = i;
    const uint32_t dst = edges_[order[i]].dst;
    while (j < order.size() && edges_[order[j]].dst == dst) ++j;
    DNode& n = nodes_[dst];
    size_t best = i;
    double best_ready = -std::numeric_limits<double>::infinity();
    for (size_t k = i; k < j; ++k) {
      const DEdge& e = edges_[order[k]];
      const double ready = us(pred_finish(e) - t0_) + e.expected_lag_us;
      if (ready > best_ready) {
        best_ready = ready;
        best = k;
      }
    }
    for (size_t k = i; k < j; ++k) {
      const DEdge& e = edges_[order[k]];
      const double slack = us(n.seff - pred_finish(e));
      const double lag = k == best ? slack : std::min(e.expected_lag_us, slack);
      // Origin edges stand for a predecessor that finished at pred_finish, not at t0.
      (*lags)[order[k]] = e.src == 0 ? lag + us(pred_finish(e) - t0_) : lag;
    }
    i = j;
  }
}

BuildResult Builder::run() {
  steps_ = find_steps(t_);
  if (opt_.window_step >= 0) {
    LUMOS_EXPECT(opt_.window_step < static_cast<int>(steps_.size()),
                 t_.path + ": step index " + std::to_string(opt_.window_step) + " out of range (" +
                     std::to_string(steps_.size()) + " ProfilerSteps)");
    wb_ = steps_[opt_.window_step].begin_ns;
    we_ = steps_[opt_.window_step].end_ns;
  }
  for (uint32_t i = 0; i < t_.events.size(); ++i) {
    const Event& e = t_.events[i];
    if (e.kind == EventKind::kRuntime && e.correlation >= 0)
      runtime_event_.emplace(e.correlation, i);
    if (e.kind == EventKind::kSync) {
      has_sync_events_ = true;
      sync_event_.emplace(e.correlation, i);
    }
  }
  // A cuda_sync event names the runtime call it belongs to and, for event waits, the record call;
  // a correlation that matches no call means the trace is inconsistent.
  for (const Event& e : t_.events) {
    if (e.kind != EventKind::kSync) continue;
    auto dangling = [&](const char* field, int64_t corr) {
      throw InputError(
          t_.path + ": event #" + std::to_string(e.index) + " (" + std::string(t_.name_of(e)) +
          "): field '" + field +
          "': expected the correlation of a runtime call in the trace, got dangling id " +
          std::to_string(corr));
    };
    if (!runtime_event_.count(e.correlation)) dangling("args.correlation", e.correlation);
    if (e.wait_on_record_corr >= 0 && !runtime_event_.count(e.wait_on_record_corr))
      dangling("args.wait_on_cuda_event_record_corr_id", e.wait_on_record_corr);
  }
  nodes_.push_back(DNode{});  // the origin
  build_cpu_nodes();
  build_gpu_nodes();
  LUMOS_EXPECT(
      nodes_.size() > 1,
      t_.path + ": no CPU or GPU activity" +
          (opt_.window_step >= 0 ? " in step " + steps_[opt_.window_step].name : std::string()));
  // t0: the step's start, or the earliest activity of the trace.
  if (opt_.window_step >= 0) {
    t0_ = wb_;
  } else {
    t0_ = std::numeric_limits<int64_t>::max();
    for (size_t n = 1; n < nodes_.size(); ++n) t0_ = std::min(t0_, nodes_[n].s);
  }
  nodes_[0].s = nodes_[0].e = nodes_[0].seff = t0_;
  if (opt_.window_step >= 0) {
    for (uint32_t m : step_markers_)
      if (nodes_[m].s == wb_) marker_node_ = m;
  }
  is_sync_node_.assign(nodes_.size(), 0);
  split_blocking_copies();
  add_gpu_to_cpu_syncs();
  add_stream_waits();

  // Expected lags of launch and stream edges, from the trace itself. A GPU op counts as launched
  // onto an idle stream (HTA's rule) when its stream's previous op and any event it waited for
  // had finished before the launch call began.
  {
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
  add_thread_edges();
  add_stream_edges();
  add_origin_edges();
  std::vector<double> lags;
  assign_lags(&lags);
  for (const DEdge& e : edges_) ++stats_.edges_by_kind[static_cast<int>(e.kind)];

  // Hand the draft to the flattener.
  Draft d;
  d.nodes.reserve(nodes_.size());
  for (const DNode& n : nodes_) {
    DraftNode dn;
    dn.kind = n.kind;
    dn.cls = n.cls;
    dn.resource = n.res;
    dn.step = n.step;
    dn.name = n.name;
    dn.event = n.event >= 0 ? static_cast<int64_t>(t_.events[n.event].index) : -1;
    dn.start_us = us(n.seff - t0_);
    dn.dur_us = us(std::max<int64_t>(0, n.e - n.seff));
    d.nodes.push_back(dn);
  }
  d.edges.reserve(edges_.size());
  for (size_t k = 0; k < edges_.size(); ++k)
    d.edges.push_back({edges_[k].src, edges_[k].dst, edges_[k].kind, lags[k]});

  BuildResult out;
  std::vector<NodeId> new_id;
  out.graph = flatten(
      d, &new_id,
      [&](uint32_t draft_node) {
        const DNode& n = nodes_[draft_node];
        std::string where =
            n.event >= 0 ? "event #" + std::to_string(t_.events[n.event].index) : "node";
        return where + " '" + t_.names[n.name] + "'";
      },
      t_.path);
  Graph& g = out.graph;
  g.resources = resources_;
  g.names = t_.names;
  g.t0_ns = t0_;
  g.rank = std::max(0, t_.rank);
  g.source = t_.path;

  // Steps: measured iteration time = last activity belonging to the step minus its start.
  if (opt_.window_step >= 0) {
    const TraceStep& ts = steps_[opt_.window_step];
    Step s;
    s.name = ts.name;
    s.rank = g.rank;
    s.marker = marker_node_ != kNone ? new_id[marker_node_] : kOrigin;
    int64_t end = ts.begin_ns;
    for (size_t n = 1; n < nodes_.size(); ++n) end = std::max(end, nodes_[n].finish());
    s.measured_us = us(end - ts.begin_ns);
    g.steps.push_back(s);
  } else if (!steps_.empty()) {
    std::vector<int64_t> end(steps_.size(), kNoTime);
    for (size_t n = 1; n < nodes_.size(); ++n)
      if (nodes_[n].step >= 0)
        end[nodes_[n].step] = std::max(end[nodes_[n].step], nodes_[n].finish());
    for (size_t k = 0; k < steps_.size(); ++k) {
      Step s;
      s.name = steps_[k].name;
      s.rank = g.rank;
      s.marker = kOrigin;
      for (uint32_t m : step_markers_)
        if (nodes_[m].s == steps_[k].begin_ns && nodes_[m].event == steps_[k].event)
          s.marker = new_id[m];
      s.measured_us = end[k] == kNoTime ? 0.0 : us(end[k] - steps_[k].begin_ns);
      g.steps.push_back(s);
    }
  } else {
    Step s;
    s.name = "trace";
    s.rank = g.rank;
    s.marker = kOrigin;
    int64_t end = t0_;
    for (size_t n = 1; n < nodes_.size(); ++n) end = std::max(end, nodes_[n].finish());
    s.measured_us = us(end - t0_);
    g.steps.push_back(s);
    for (auto& st : g.step) st = st < 0 ? 0 : st;
  }
  if (steps_.empty()) g.step[kOrigin] = -1;

  // Match keys (per resource, name, piece: the k-th occurrence in start order).
  out.keys.assign(g.num_nodes(), MatchKey{});
  {
    std::vector<uint32_t> by_start(nodes_.size() - 1);
    for (uint32_t i = 0; i < by_start.size(); ++i) by_start[i] = i + 1;
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](uint32_t x, uint32_t y) { return nodes_[x].s < nodes_[y].s; });
    // Occurrences of top-level operators per (thread, name), then of nodes within each parent.
    std::map<std::tuple<uint32_t, uint32_t>, uint32_t> parent_seen;
    std::map<int64_t, uint32_t> parent_occ;  // parent event -> occurrence
    std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> seen;
    for (uint32_t dn : by_start) {
      const DNode& n = nodes_[dn];
      MatchKey k;
      if (n.res != kNoResource) {
        k.resource_kind = static_cast<uint8_t>(resources_[n.res].kind);
        k.a = resources_[n.res].a;
        k.b = resources_[n.res].b;
      }
      if (n.parent != kNone) {
        auto it = parent_occ.find(n.parent_event);
        if (it == parent_occ.end())
          it = parent_occ.emplace(n.parent_event, parent_seen[{n.res, n.parent}]++).first;
        k.parent = n.parent;
        k.parent_occurrence = it->second;
      }
      k.name = n.name;
      k.piece = n.piece;
      k.occurrence = seen[{n.res, k.parent, k.parent_occurrence, n.name, n.piece}]++;
      out.keys[new_id[dn]] = k;
    }
  }
  for (size_t k = 0; k < edges_.size(); ++k) {
    const DEdge& e = edges_[k];
    if (e.kind != EdgeKind::kOrigin || e.pred_finish == t0_ || e.src != 0) continue;
    const DNode& n = nodes_[e.dst];
    FreeEdge fe;
    fe.node = new_id[e.dst];
    fe.resource_kind = static_cast<uint8_t>(resources_[n.res].kind);
    fe.a = resources_[n.res].a;
    fe.b = resources_[n.res].b;
    fe.chain_lag_us = lags[k] - us(e.pred_finish - t0_);
    out.free_edges.push_back(fe);
  }
  out.resource_free = std::move(free_ns_);
  out.stats = stats_;
  return out;
}

}  // namespace

std::vector<TraceStep> find_steps(const EventTable& t) {
  std::vector<TraceStep> steps;
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    // Legacy traces record the step as an operator (cat "Operator").
    if (e.kind != EventKind::kUserAnnotation && e.kind != EventKind::kCpuOp) continue;
    const std::string_view n = t.name_of(e);
    if (!is_step_name(n)) continue;
    TraceStep s;
    s.name = std::string(n);
    s.number = std::strtoll(s.name.c_str() + 13, nullptr, 10);
    s.begin_ns = e.ts_ns;
    s.end_ns = e.end_ns();
    s.pid = e.pid;
    s.tid = e.tid;
    s.event = i;
    steps.push_back(s);
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const TraceStep& a, const TraceStep& b) { return a.begin_ns < b.begin_ns; });
  for (size_t k = 0; k + 1 < steps.size(); ++k)
    steps[k].end_ns = std::max(steps[k].end_ns, steps[k + 1].begin_ns);
  // A later step's window never reaches back into an earlier one.
  for (size_t k = 0; k + 1 < steps.size(); ++k)
    steps[k].end_ns = std::min(steps[k].end_ns, steps[k + 1].begin_ns);
  return steps;
}

BuildResult build_graph(const EventTable& t, const BuildOptions& opt) {
  Builder b(t, opt);
  return b.run();
}

}  // namespace lumos::graph
