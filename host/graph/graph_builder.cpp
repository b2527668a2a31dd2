// Orchestration of a trace graph build: the phases in their order (each in the file named for
// what it does, see trace_builder.hpp), the step window, t0, flattening and step timing.
#include "graph/graph_builder.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "graph/flatten.hpp"
#include "graph/trace_builder.hpp"

namespace lumos::graph {

using trace::Event;
using trace::EventKind;
using trace::EventTable;

namespace detail {

Builder::Builder(const EventTable& t, const BuildOptions& o) : t_(t), opt_(o) {
  name_role_.reserve(t.names.size());
  name_comm_.reserve(t.names.size());
  for (const std::string& n : t.names) {
    name_role_.push_back(trace::runtime_role(n));
    name_comm_.push_back(trace::is_comm_kernel(n) ? 1 : 0);
  }
}

// The phases in dependency order: nodes before edges; the measured waits on the GPU before the
// launch-latency medians (which leave out launches that waited), the medians before the edges
// that use them as expected lags, every edge before the lags, the lags before flattening.
BuildResult Builder::run() {
  select_window();
  index_events();
  build_nodes();
  place_origin();
  // Dependencies read from the trace: waits on the GPU (blocking copies, syncs, stream waits).
  split_blocking_copies();
  add_gpu_to_cpu_syncs();
  add_stream_waits();
  // The expected lags the remaining edges use, then those edges.
  measure_launch_latency();
  add_thread_edges();
  add_stream_edges();
  add_origin_edges();
  const std::vector<double> lags = assign_lags();
  for (const DEdge& e : edges_) ++stats_.edges_by_kind[static_cast<int>(e.kind)];

  BuildResult out;
  std::vector<NodeId> new_id;
  out.graph = flatten_draft(lags, &new_id);
  set_steps(&out.graph, new_id);
  if (opt_.transplant_data) {
    out.keys = match_keys(new_id, out.graph.num_nodes());
    out.free_edges = free_edges(lags, new_id);
    out.resource_free = std::move(free_ns_);
  }
  out.stats = stats_;
  return out;
}

// The ProfilerSteps, and for a one-step build the window of trace time that belongs to it:
// everything that starts outside it is left out (or is backlog, see add_origin_edges).
void Builder::select_window() {
  steps_ = find_steps(t_);
  if (opt_.window_step >= 0) {
    LUMOS_EXPECT(opt_.window_step < static_cast<int>(steps_.size()),
                 t_.path + ": step index " + std::to_string(opt_.window_step) + " out of range (" +
                     std::to_string(steps_.size()) + " ProfilerSteps)");
    wb_ = steps_[opt_.window_step].begin_ns;
    we_ = steps_[opt_.window_step].end_ns;
  }
}

// t0, the origin's time: the step's start, or the earliest activity of the trace. A one-step
// graph's own step marker (the one at the window's start) is found here too: it hangs off the
// origin rather than off its resource's free time.
void Builder::place_origin() {
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
}

// Hands the draft (times relative to t0, lags per edge) to the flattener shared with model
// graphs; a cycle names the trace events it runs through.
Graph Builder::flatten_draft(const std::vector<double>& lags, std::vector<NodeId>* new_id) const {
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

  Graph g = flatten(
      d, new_id,
      [&](uint32_t draft_node) {
        const DNode& n = nodes_[draft_node];
        std::string where =
            n.event >= 0 ? "event #" + std::to_string(t_.events[n.event].index) : "node";
        return where + " '" + t_.names[n.name] + "'";
      },
      t_.path);
  g.resources = resources_;
  g.names = t_.names;
  g.t0_ns = t0_;
  g.rank = std::max(0, t_.rank);
  g.source = t_.path;
  return g;
}

// The graph's steps, each with its marker node and its measured iteration time: the last
// activity belonging to the step minus its start. A trace without ProfilerSteps is one step,
// "trace", that every node belongs to.
void Builder::set_steps(Graph* graph, const std::vector<NodeId>& new_id) const {
  Graph& g = *graph;
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
}

}  // namespace detail

std::vector<TraceStep> find_steps(const EventTable& t) {
  std::vector<TraceStep> steps;
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    // Legacy traces record the step as an operator (cat "Operator").
    if (e.kind != EventKind::kUserAnnotation && e.kind != EventKind::kCpuOp) continue;
    const std::string_view n = t.name_of(e);
    if (!detail::is_step_name(n)) continue;
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
  detail::Builder b(t, opt);
  return b.run();
}

}  // namespace lumos::graph
