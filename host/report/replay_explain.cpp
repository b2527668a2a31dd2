#include "report/replay_explain.hpp"

#include <algorithm>

#include "common/format.hpp"
#include "report/breakdown_report.hpp"

namespace lumos::report {
namespace {

double pct(double part, double whole) {
  return whole > 0 ? part / whole * 100.0 : 0.0;
}

// A path this close to the window's length needs no explanation of the difference.
constexpr double kSpansWindow = 0.99;

}  // namespace

void idle_split_text(std::ostream& os, const replay::IdleSplit& s, double window_us) {
  os << strprintf(
      "\nGPU idle (no kernel, memcpy or memset running): %.1f us of %.1f us (%.1f%%) "
      "in %u gaps; the op after each gap was waiting for\n",
      s.idle_us, window_us, pct(s.idle_us, window_us), s.gaps);
  const struct {
    const char* what;
    double us;
  } parts[] = {{"the host (CPU) to launch it", s.host_us},
               {"the host, held in a synchronization", s.sync_us},
               {"another stream or a peer rank", s.dependency_us},
               {"nothing: truly idle", s.truly_idle_us}};
  for (const auto& p : parts)
    os << strprintf("  %-38s %12.1f us (%5.1f%% of idle)\n", p.what, p.us, pct(p.us, s.idle_us));
}

void idle_split_json(common::JsonWriter& w, const replay::IdleSplit& s) {
  w.begin_object()
      .field("idle_us", s.idle_us)
      .field("host_us", s.host_us)
      .field("sync_us", s.sync_us)
      .field("dependency_us", s.dependency_us)
      .field("truly_idle_us", s.truly_idle_us)
      .field("gaps", s.gaps)
      .end_object();
}

void top_ops_text(std::ostream& os, const char* title, const std::vector<replay::OpTotal>& ops,
                  double busy_us) {
  if (ops.empty()) return;
  os << '\n' << title << '\n';
  os << strprintf("  %12s %7s %7s  %s\n", "time_us", "share", "count", "name");
  for (const auto& o : ops) {
    const std::string share = busy_us > 0 ? strprintf("%6.1f%%", pct(o.total_us, busy_us)) : "-";
    os << strprintf("  %12.1f %7s %7u  %.80s\n", o.total_us, share.c_str(), o.count,
                    o.name.c_str());
  }
}

void top_ops_json(common::JsonWriter& w, const std::vector<replay::OpTotal>& ops) {
  w.begin_array();
  for (const auto& o : ops)
    w.begin_object()
        .field("name", o.name)
        .field("total_us", o.total_us)
        .field("count", o.count)
        .end_object();
  w.end_array();
}

Window steps_window(const graph::Graph& g, const replay::ReplayResult& r,
                    const std::vector<replay::StepTime>& steps) {
  Window w;
  bool any = false;
  for (size_t k = 0; k < g.steps.size() && k < steps.size(); ++k) {
    const double b = r.start_us[g.steps[k].marker], e = b + steps[k].replayed_us;
    w.begin_us = any ? std::min(w.begin_us, b) : b;
    w.end_us = any ? std::max(w.end_us, e) : e;
    any = true;
  }
  if (!any) w.end_us = r.makespan_us;  // no steps: the whole replay
  return w;
}

void critical_path_text(std::ostream& os, const replay::ReplayResult& r,
                        const replay::CriticalPath& cp, const Window& w) {
  const bool hta = cp.mode == replay::CriticalPathMode::kHtaWeights;
  auto cls = [&](graph::NodeClass c) { return cp.by_class_us[static_cast<int>(c)]; };
  os << strprintf(
      "\ncritical path (%s): %.1f us from its first op's start to its last op's end, "
      "over %zu ops:\n",
      hta ? "HTA weights" : "timing", cp.length_us, cp.nodes.size());
  const struct {
    const char* what;
    double us;
  } parts[] = {{"CPU operators and runtime calls", cls(graph::NodeClass::kCpu)},
               {"GPU compute kernels", cls(graph::NodeClass::kCompute)},
               {"GPU communication kernels", cls(graph::NodeClass::kComm)},
               {"GPU memcpy and memset", cls(graph::NodeClass::kMemory)},
               {"gaps between ops (launch delays, waits)", cp.lag_us}};
  for (const auto& p : parts)
    os << strprintf("  %-40s %12.1f us (%5.1f%%)\n", p.what, p.us, pct(p.us, cp.length_us));
  if (cp.nodes.empty()) return;
  const double first = r.start_us[cp.nodes.front()], last = r.finish_us[cp.nodes.back()];
  const double window = w.end_us - w.begin_us;
  os << strprintf("  the path runs from %+.1f us to %+.1f us of the steps' window (0 to %.1f us)",
                  first - w.begin_us, last - w.begin_us, window);
  if (cp.length_us >= kSpansWindow * window) {
    os << ": it spans the window\n";
  } else if (hta) {
    os << strprintf(
        ";\n  it is shorter because HTA's convention follows the chain with the most work (%.1f us "
        "weighed here) and waits weigh nothing (CPU gaps between operators, blocked "
        "synchronizations, waits for another stream): that chain need not start or end with the "
        "window; --critical-path timing follows what set each start instead\n",
        cp.weight_us);
  } else {
    os << ";\n  it is shorter because it starts where the chain of what set each start leads "
          "back to, and what ran before that held nothing on the path\n";
  }
}

void rank_windows_text(std::ostream& os, const std::vector<replay::RankWindows>& ranks) {
  os << "\nper rank, over its steps' windows (compute includes memcpy and memset; idle is split "
        "by what the op after each gap waited for):\n";
  os << strprintf("%5s %12s %12s %12s %12s %12s | %10s %10s %10s %10s\n", "rank", "window_us",
                  "compute_us", "overlap_us", "comm_us", "idle_us", "host_us", "sync_us",
                  "depend_us", "truly_us");
  for (const auto& k : ranks) {
    const replay::Breakdown& b = k.breakdown;
    os << strprintf("%5d %12.1f %12.1f %12.1f %12.1f %12.1f | %10.1f %10.1f %10.1f %10.1f\n",
                    k.rank, b.window_us, b.exposed_compute_us, b.overlapped_us, b.exposed_comm_us,
                    b.other_us, k.idle.host_us, k.idle.sync_us, k.idle.dependency_us,
                    k.idle.truly_idle_us);
  }
}

void rank_windows_json(common::JsonWriter& w, const std::vector<replay::RankWindows>& ranks) {
  w.begin_array();
  for (const auto& k : ranks) {
    w.begin_object().field("rank", k.rank).field("steps", k.steps);
    w.key("breakdown");
    breakdown_json(w, k.breakdown);
    w.key("gpu_idle");
    idle_split_json(w, k.idle);
    w.end_object();
  }
  w.end_array();
}

}  // namespace lumos::report
