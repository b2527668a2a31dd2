// The dependency edges of a trace graph (GPU->CPU syncs, inter-stream waits, thread chains and
// wake-ups, stream chains and launches, origin and resource-free edges) and the lag of each.
#include <algorithm>
#include <limits>

#include "graph/trace_builder.hpp"
#include "trace/runtime_names.hpp"

namespace lumos::graph::detail {

using trace::Event;
using trace::EventKind;
using trace::RuntimeRole;
using trace::SyncKind;

// A call that waited for GPU work (stream, device or event synchronize, per its cuda_sync record
// or, without one, its name) becomes a sync node after the last op launched on the streams it
// waited for, and starts in effect when that work is done.
void Builder::add_gpu_to_cpu_syncs() {
  const int64_t tol = static_cast<int64_t>(opt_.sync_tolerance_us * 1000);
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    DNode& call = nodes_[n];
    if (call.kind != NodeKind::kRuntime || call.event < 0) continue;
    const Event& ce = t_.events[call.event];
    const RuntimeRole role = role_of(ce);
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
    for (uint32_t src : sources) {
      if (src == kNone) continue;
      if (nodes_[src].finish() > call.e + tol) continue;  // still running when the call returned
      edges_.push_back({src, n, EdgeKind::kGpuToCpuSync, 0.0});
      // The call starts, in effect, when the GPU work it waits for is done.
      call.seff = std::max(call.seff, nodes_[src].finish());
    }
  }
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
                       role_of(c.name) == RuntimeRole::kEventRecord;
      v[i + 1] = rec ? seq[i] : v[i];
    }
    it = last_record_.emplace(thread_res, std::move(v)).first;
  }
  return pos < it->second.size() ? it->second[pos] : kNone;
}

// cudaStreamWaitEvent: the next op launched on the waiting stream waits for the last op launched
// on the recorded stream before the record. Older traces without cuda_sync records pair the wait
// with the thread's latest record.
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
    if (role_of(ce) != RuntimeRole::kStreamWaitEvent) continue;
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

// Intra-thread chains. The expected lag of a chain edge is the measured gap (CPU time that does
// not depend on anything else), except where another thread explains the gap (an inter-thread
// edge from the work that woke this thread).
void Builder::add_thread_edges() {
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

// Stream chains (the expected lag is the median busy-stream gap) and launch edges (the median
// launch latency), both measured by measure_launch_latency.
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

// Every node without a predecessor hangs off the origin at its measured start; in a one-step
// graph, each resource's first node also waits for the time the resource became free.
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
      if (opt_.transplant_data)
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
std::vector<double> Builder::assign_lags() {
  std::vector<uint32_t> order(edges_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return edges_[x].dst < edges_[y].dst; });
  std::vector<double> lags(edges_.size(), 0.0);
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
      lags[order[k]] = e.src == 0 ? lag + us(pred_finish(e) - t0_) : lag;
    }
    i = j;
  }
  return lags;
}

}  // namespace lumos::graph::detail
