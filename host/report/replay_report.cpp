#include "report/replay_report.hpp"

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/breakdown_report.hpp"
#include "report/peer_waits_report.hpp"
#include "report/replay_explain.hpp"

namespace lumos::report {
namespace {

double cp_class_us(const replay::CriticalPath& cp, graph::NodeClass c) {
  return cp.by_class_us[static_cast<int>(c)];
}

}  // namespace

void replay_json(std::ostream& os, const graph::LoadedInput& in, const estimate::ReplayAnswer& a) {
  const graph::Graph& g = in.graph;
  common::JsonWriter w(os);
  w.begin_object();
  w.field("input", in.label);
  w.field("backend", a.backend);
  w.field("rank", g.rank);
  w.key("graph").begin_object();
  w.field("nodes", g.num_nodes()).field("edges", g.num_edges()).field("wavefronts", g.num_waves());
  w.end_object();
  w.key("steps").begin_array();
  for (const auto& s : a.steps) {
    w.begin_object();
    w.field("name", s.name).field("rank", s.rank).field("measured_us", s.measured_us);
    w.field("replayed_us", s.replayed_us).field("error_pct", s.error_pct);
    w.end_object();
  }
  w.end_array();
  w.key("breakdown");
  breakdown_json(w, a.replayed);
  w.key("measured_breakdown");
  breakdown_json(w, a.measured);
  w.key("gpu_idle");
  idle_split_json(w, a.idle);
  w.key("top_kernels");
  top_ops_json(w, a.top_kernels);
  w.key("top_cpu_ops");
  top_ops_json(w, a.top_cpu_ops);
  w.key("comm_waits");
  peer_waits_json(w, a.peer_waits);
  w.key("streams").begin_array();
  for (const auto& s : a.streams) {
    w.begin_object();
    w.field("device", s.device)
        .field("stream", s.stream)
        .field("busy_us", s.busy_us)
        .field("ops", s.ops);
    w.end_object();
  }
  w.end_array();
  const replay::CriticalPath& cp = a.critical_path;
  w.key("critical_path").begin_object();
  w.field("mode", cp.mode == replay::CriticalPathMode::kTiming ? "timing" : "hta");
  w.field("length_us", cp.length_us).field("weight_us", cp.weight_us);
  w.field("nodes", static_cast<uint64_t>(cp.nodes.size()));
  w.field("cpu_us", cp_class_us(cp, graph::NodeClass::kCpu));
  w.field("compute_us", cp_class_us(cp, graph::NodeClass::kCompute));
  w.field("comm_us", cp_class_us(cp, graph::NodeClass::kComm));
  w.field("memory_us", cp_class_us(cp, graph::NodeClass::kMemory));
  w.field("lag_us", cp.lag_us);
  const Window win = steps_window(g, a.replay, a.steps);
  w.field("window_us", win.end_us - win.begin_us);
  if (!cp.nodes.empty()) {
    w.field("starts_after_window_us", a.replay.start_us[cp.nodes.front()] - win.begin_us);
    w.field("ends_before_window_us", win.end_us - a.replay.finish_us[cp.nodes.back()]);
  }
  w.key("gpu_ops").begin_array();
  for (graph::NodeId v : cp.nodes) {
    if (g.cls[v] == graph::NodeClass::kCpu) continue;
    w.begin_object()
        .field("name", g.names[g.name[v]])
        .field("trace_event", g.event[v])
        .end_object();
  }
  w.end_array();
  w.end_object();
  if (a.transplant) {
    const auto& t = *a.transplant;
    w.key("transplant").begin_object();
    w.field("from", t.from).field("to", t.to).field("predicted_us", t.predicted_us);
    w.field("measured_us", t.measured_us).field("error_pct", t.error_pct);
    w.field("naive_us", t.naive_us).field("naive_error_pct", t.naive_error_pct);
    w.field("matched_fraction", t.matched_fraction);
    w.field("covered_fraction", t.covered_fraction);
    w.key("differences").begin_array();
    for (const auto& d : t.differences) w.value(d);
    w.end_array();
    w.end_object();
  }
  w.end_object();
  os << '\n';
}

void replay_text(std::ostream& os, const graph::LoadedInput& in, const estimate::ReplayAnswer& a) {
  const graph::Graph& g = in.graph;
  os << strprintf("lumos replay: %s (rank %d; %u nodes, %u edges, %u wavefronts; %s backend)\n",
                  in.label.c_str(), g.rank, g.num_nodes(), g.num_edges(), g.num_waves(),
                  a.backend.c_str());
  os << strprintf("\n%-24s %6s %14s %14s %9s\n", "step", "rank", "measured_us", "replayed_us",
                  "error");
  for (const auto& s : a.steps)
    os << strprintf("%-24s %6d %14.1f %14.1f %8.3f%%\n", s.name.c_str(), s.rank, s.measured_us,
                    s.replayed_us, s.error_pct);
  os << "\nbreakdown over the steps' windows (compute includes memcpy and memset):\n";
  breakdown_line(os, "replayed", a.replayed);
  breakdown_line(os, "measured", a.measured);
  idle_split_text(os, a.idle, a.replayed.window_us);
  double gpu_busy_us = 0;
  for (const auto& st : a.streams) gpu_busy_us += st.busy_us;
  top_ops_text(os,
               "kernels with the most replayed time (share of all GPU busy time):", a.top_kernels,
               gpu_busy_us);
  top_ops_text(os, "CPU operators and runtime calls with the most replayed time:", a.top_cpu_ops,
               0.0);
  peer_waits_text(os, a.peer_waits);
  os << "\nbusy time per stream (replayed):\n";
  for (const auto& s : a.streams)
    os << strprintf("  GPU %lld stream %-6lld %14.1f us  %7u ops\n",
                    static_cast<long long>(s.device), static_cast<long long>(s.stream), s.busy_us,
                    s.ops);
  critical_path_text(os, a.replay, a.critical_path, steps_window(g, a.replay, a.steps));
  if (a.transplant) {
    const auto& t = *a.transplant;
    os << strprintf(
        "\ntransplant %s -> %s: predicted %.1f us, measured %.1f us, error %.3f%% (naive guess "
        "%.1f us, error %.3f%%); %.1f%% of %s's nodes found in %s, %.1f%% of %s's in %s\n",
        t.from.c_str(), t.to.c_str(), t.predicted_us, t.measured_us, t.error_pct, t.naive_us,
        t.naive_error_pct, t.matched_fraction * 100.0, t.from.c_str(), t.to.c_str(),
        t.covered_fraction * 100.0, t.to.c_str(), t.from.c_str());
  }
}

}  // namespace lumos::report
