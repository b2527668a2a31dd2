// The nodes of a trace graph: CPU pieces per thread, GPU ops per stream, and blocking copies
// split into the call that enqueues and the wait that follows.
#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "graph/trace_builder.hpp"
#include "trace/runtime_names.hpp"

namespace lumos::graph::detail {

using trace::Event;
using trace::EventKind;
using trace::RuntimeRole;

// The origin, then every CPU node (GPU nodes find their launch calls among them) and every GPU
// node. A graph with nothing but the origin is an input error, not an empty answer.
void Builder::build_nodes() {
  nodes_.push_back(DNode{});  // the origin
  build_cpu_nodes();
  build_gpu_nodes();
  LUMOS_EXPECT(
      nodes_.size() > 1,
      t_.path + ": no CPU or GPU activity" +
          (opt_.window_step >= 0 ? " in step " + steps_[opt_.window_step].name : std::string()));
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

// GPU ops per stream in start order, each after its launch call (by correlation). The launch
// orders per stream and per thread let the sync and stream-wait phases find "the last op launched
// before" a call.
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
      n.cls = e.kind == EventKind::kKernel ? (is_comm(e) ? NodeClass::kComm : NodeClass::kCompute)
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
        // A GPU op cannot start before the call that launched it: where the trace says so, the
        // CPU and GPU clocks disagree and every launch lag measured from it is wrong.
        const int64_t early_ns = n.launch_ts - e.ts_ns;
        if (early_ns > kClockToleranceNs) {
          ++stats_.gpu_ops_before_launch;
          stats_.max_before_launch_us =
              std::max(stats_.max_before_launch_us, static_cast<double>(early_ns) / 1000);
        }
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
    if (role_of(call.name) == RuntimeRole::kLaunch)
      enqueue.push_back(static_cast<double>(call.e - call.s));
  }
  const auto enqueue_ns = static_cast<int64_t>(median(enqueue));
  std::vector<std::pair<uint32_t, uint32_t>> inserts;  // (call node, wait node)
  for (uint32_t g = 0; g < n_before; ++g) {
    const DNode& op = nodes_[g];
    if (op.kind != NodeKind::kMemcpy || op.launcher == kNone) continue;
    const DNode& call = nodes_[op.launcher];
    if (call.kind != NodeKind::kRuntime) continue;
    if (role_of(call.name) != RuntimeRole::kBlockingMemcpy) continue;
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

}  // namespace lumos::graph::detail
