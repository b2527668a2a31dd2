#include "report/bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/breakdown_report.hpp"

namespace lumos::report {

void batch_benchmark_text(std::ostream& os, const engine::BatchBenchmark& b) {
  os << strprintf(
      "batch %s: %u nodes x %u variants in %.4f s: %.3g node-variants/s, %.3g B/s; reference "
      "%.3g nodes/s; %.1fx the reference per variant\n",
      b.backend.c_str(), b.nodes, b.variants, b.seconds_per_launch, b.node_variants_per_s,
      b.bytes_per_s, b.reference_nodes_per_s, b.vs_reference);
  if (b.kernel_seconds_per_launch > 0)
    os << strprintf(
        "the replay kernels alone (CUDA events): %.3g s per launch, %.3g node-variants/s\n",
        b.kernel_seconds_per_launch, b.kernel_node_variants_per_s);
  if (b.machine_copy_bytes_per_s > 0)
    os << strprintf(
        "machine memcpy %.3g B/s; the replay touches %.0f%% of that in state "
        "(mostly in cache)\n",
        b.machine_copy_bytes_per_s, 100.0 * b.fraction_of_copy_bandwidth);
  if (b.max_live > 0)
    os << strprintf(
        "replay program: max_live %u registers (%u serve 99%% of reads) for %u nodes (compiled "
        "once in %.3f s); state %.3g B (tiles of %u variants%s), %.3f%% of a [node][variant] "
        "state\n",
        b.max_live, b.hot_registers, b.nodes, b.compile_s, b.state_bytes, b.tile,
        b.critical_path ? "" : ", finish times only", 100.0 * b.state_fraction);
  const engine::DeviceProjection& p = b.projection;
  if (!p.gpu.empty())
    os << strprintf(
        "projection for the cuda backend on %s (not measured, %s): %.3g node-variants/s, bound "
        "by %s (issue: %.1f PTX instructions, %.1f issue slots per node-variant at %.3g/s -> %.3g; "
        "shared memory: "
        "%u registers, %.0f warps per SM, %.1f B per node-variant at %.3g B/s -> %.3g; global: "
        "%.2f B per node-variant from %s at %.3g B/s -> %.3g)\n",
        p.gpu.c_str(), p.critical_path ? "with the critical path" : "finish times alone",
        p.projected, p.limit.c_str(), p.instructions_per_node_variant,
        p.issue_slots_per_node_variant, p.thread_instructions_per_s, p.issue_bound,
        p.shared_registers, p.warps_per_sm, p.shared_bytes_per_node_variant, p.shared_bytes_per_s,
        p.shared_bound, p.state_bytes_per_node_variant, p.state_level.c_str(), p.state_bytes_per_s,
        p.state_bound);
}

void batch_benchmark_json(std::ostream& os, const engine::BatchBenchmark& b) {
  common::JsonWriter w(os);
  w.begin_object().field("backend", b.backend).field("nodes", b.nodes).field("edges", b.edges);
  w.field("variants", b.variants)
      .field("seconds_per_launch", b.seconds_per_launch)
      .field("node_variants_per_s", b.node_variants_per_s);
  w.field("bytes_per_s", b.bytes_per_s).field("reference_nodes_per_s", b.reference_nodes_per_s);
  w.field("vs_reference", b.vs_reference);
  if (b.kernel_seconds_per_launch > 0)
    w.field("kernel_seconds_per_launch", b.kernel_seconds_per_launch)
        .field("kernel_node_variants_per_s", b.kernel_node_variants_per_s);
  if (b.machine_copy_bytes_per_s > 0)
    w.field("machine_copy_bytes_per_s", b.machine_copy_bytes_per_s)
        .field("fraction_of_copy_bandwidth", b.fraction_of_copy_bandwidth);
  if (b.max_live > 0)
    w.field("max_live", b.max_live)
        .field("hot_registers", b.hot_registers)
        .field("state_bytes", b.state_bytes)
        .field("state_fraction", b.state_fraction)
        .field("tile", b.tile)
        .field("critical_path", b.critical_path)
        .field("compile_s", b.compile_s);
  const engine::DeviceProjection& p = b.projection;
  if (!p.gpu.empty()) {
    w.key("cuda_projection").begin_object();
    w.field("gpu", p.gpu)
        .field("node_variants_per_s", p.projected)
        .field("limit", p.limit)
        .field("instructions_per_node_variant", p.instructions_per_node_variant)
        .field("issue_slots_per_node_variant", p.issue_slots_per_node_variant)
        .field("thread_instructions_per_s", p.thread_instructions_per_s)
        .field("issue_bound", p.issue_bound);
    w.field("critical_path", p.critical_path)
        .field("shared_registers", p.shared_registers)
        .field("warps_per_sm", p.warps_per_sm)
        .field("shared_bytes_per_node_variant", p.shared_bytes_per_node_variant)
        .field("shared_bytes_per_s", p.shared_bytes_per_s)
        .field("shared_bound", p.shared_bound);
    w.field("state_bytes_per_node_variant", p.state_bytes_per_node_variant)
        .field("resident_state_bytes", p.resident_state_bytes)
        .field("state_level", p.state_level)
        .field("state_bytes_per_s", p.state_bytes_per_s)
        .field("state_bound", p.state_bound);
    w.end_object();
  }
  w.end_object();
  os << '\n';
}

namespace {

// The width of the run column: 37, or the longest label.
int label_width(const std::vector<estimate::CalibrationRow>& rows) {
  size_t w = 37;
  for (const estimate::CalibrationRow& r : rows) w = std::max(w, r.run->label.size());
  return static_cast<int>(w);
}

// One line per run (a star where lumos models something differently), then the notes.
void rows_text(std::ostream& os, const std::vector<estimate::CalibrationRow>& rows) {
  const int lw = label_width(rows);
  os << strprintf("  %-*s %-14s %-18s %10s %9s %8s %13s %16s\n", lw, "run", "gpu", "stack",
                  "published", "lumos", "error", "TFLOP/s p/l", "comp/comm/bubble");
  for (const estimate::CalibrationRow& r : rows) {
    const replay::Breakdown& b = r.breakdown;
    const double w = b.window_us > 0 ? b.window_us / 100 : 1;
    os << strprintf("  %-*s %-14s %-18s %9.3fs %8.3fs %+7.1f%% %6.1f/%-6.1f %5.1f/%4.1f/%4.1f%s\n",
                    lw, r.run->label.c_str(), r.run->request.gpu.c_str(),
                    r.run->request.cfg.stack.c_str(), r.published_step_s, r.step_time_s,
                    r.error_pct, r.published_tflops_per_gpu, r.lumos_tflops_per_gpu,
                    b.exposed_compute_us / w, b.exposed_comm_us / w, b.bubble_us / w,
                    r.run->note.empty() ? "" : "  *");
  }
  for (const estimate::CalibrationRow& r : rows)
    if (!r.run->note.empty())
      os << strprintf("  * %s: %s\n", r.run->label.c_str(), r.run->note.c_str());
}

void row_json(common::JsonWriter& w, const estimate::CalibrationRow& r) {
  w.begin_object()
      .field("label", r.run->label)
      .field("options", r.run->options)
      .field("id", r.run->id)
      .field("tier", r.run->tier)
      .field("gpu", r.run->request.gpu)
      .field("stack", r.run->request.cfg.stack)
      .field("published_step_s", r.published_step_s)
      .field("step_time_s", r.step_time_s)
      .field("error_pct", r.error_pct)
      .field("lumos_tflops_per_gpu", r.lumos_tflops_per_gpu)
      .field("published_tflops_per_gpu", r.published_tflops_per_gpu)
      .field("fits", r.fits)
      .field("source", r.run->source)
      .field("note", r.run->note)
      .key("breakdown");
  breakdown_json(w, r.breakdown);
  w.end_object();
}

}  // namespace

void calibration_text(std::ostream& os, const estimate::CalibrationCheck& c) {
  os << "calibration: step time, lumos vs published (negative: lumos too fast)\n";
  os << "  (TFLOP/s p/l: model TFLOP/s per GPU, the published one implied by its step time, and\n"
        "   lumos's; comp/comm/bubble: lumos's exposed compute, exposed communication and "
        "pipeline\n"
        "   bubble, % of its step)\n";
  rows_text(os, c.rows);
  os << "by GPU and stack:\n";
  for (const estimate::CalibrationGroup& g : c.groups)
    os << strprintf(
        "  %-14s %-18s %2d runs: mean |error| %.1f%%, signed mean %+.1f%%, max %.1f%%\n",
        g.gpu.c_str(), g.stack.c_str(), g.rows, g.mean_abs_error_pct, g.signed_mean_error_pct,
        g.max_abs_error_pct);
  const estimate::EstimateLatency& l = c.latency;
  os << strprintf(
      "latency: lumos estimate %s\n  %d runs: median %.3f s (min %.3f, max %.3f); %llu "
      "nodes, %llu edges\n",
      l.options.c_str(), l.runs, l.median_s, l.min_s, l.max_s,
      static_cast<unsigned long long>(l.nodes), static_cast<unsigned long long>(l.edges));
}

void calibration_json(std::ostream& os, const estimate::CalibrationCheck& c) {
  common::JsonWriter w(os);
  w.begin_object().key("calibration").begin_array();
  for (const estimate::CalibrationRow& r : c.rows) row_json(w, r);
  w.end_array();
  w.key("groups").begin_array();
  for (const estimate::CalibrationGroup& g : c.groups)
    w.begin_object()
        .field("gpu", g.gpu)
        .field("stack", g.stack)
        .field("runs", g.rows)
        .field("mean_abs_error_pct", g.mean_abs_error_pct)
        .field("signed_mean_error_pct", g.signed_mean_error_pct)
        .field("max_abs_error_pct", g.max_abs_error_pct)
        .end_object();
  w.end_array();
  const estimate::EstimateLatency& l = c.latency;
  w.key("latency").begin_object();
  w.field("options", l.options).field("runs", l.runs).field("median_s", l.median_s);
  w.field("min_s", l.min_s).field("max_s", l.max_s);
  w.field("nodes", l.nodes).field("edges", l.edges).end_object();
  w.end_object();
  os << '\n';
}

void unfitted_text(std::ostream& os, const estimate::UnfittedCheck& u) {
  os << "unfitted columns: step time, lumos vs published, at the GPU counts of "
        "dgxc-benchmarking's\n"
        "  tables that published-runs.json leaves out (no constant is fitted to them; negative:\n"
        "  lumos too fast)\n";
  rows_text(os, u.rows);
  os << "FP8/BF16 step ratio of each layout:\n";
  const int lw = label_width(u.rows);
  os << strprintf("  %-*s %10s %9s %8s\n", lw, "BF16 run", "published", "lumos", "error");
  for (const estimate::DtypePair& p : u.pairs)
    os << strprintf("  %-*s %10.4f %9.4f %+7.1f%%\n", lw, p.bf16->run->label.c_str(),
                    p.published_ratio, p.lumos_ratio, p.error_pct);
  os << "by table (least to most error across its columns):\n";
  // A percent that rounds to zero prints as +0.0, not -0.0.
  auto pct = [](double v) { return std::fabs(v) < 0.05 ? 0.0 : v; };
  for (const estimate::UnfittedTable& t : u.tables)
    os << strprintf(
        "  %-28s %d columns: BF16 %+.1f%% to %+.1f%%, FP8 %+.1f%% to %+.1f%%, FP8/BF16 %+.1f%% "
        "to %+.1f%%\n",
        t.name.c_str(), t.columns, pct(t.bf16.least_pct), pct(t.bf16.most_pct),
        pct(t.fp8.least_pct), pct(t.fp8.most_pct), pct(t.ratio.least_pct), pct(t.ratio.most_pct));
  os << "summary:\n";
  for (const estimate::ErrorSummary* s : {&u.bf16, &u.fp8, &u.ratios})
    os << strprintf(
        "  %-15s %2d: mean |error| %.1f%%, signed mean %+.1f%%, max %.1f%%, %d within 5%%\n",
        s->what.c_str(), s->count, s->mean_abs_pct, s->signed_mean_pct, s->max_abs_pct,
        s->within_5pct);
}

void unfitted_json(std::ostream& os, const estimate::UnfittedCheck& u) {
  common::JsonWriter w(os);
  w.begin_object().key("rows").begin_array();
  for (const estimate::CalibrationRow& r : u.rows) row_json(w, r);
  w.end_array().key("pairs").begin_array();
  for (const estimate::DtypePair& p : u.pairs)
    w.begin_object()
        .field("bf16", p.bf16->run->label)
        .field("fp8", p.fp8->run->label)
        .field("published_ratio", p.published_ratio)
        .field("lumos_ratio", p.lumos_ratio)
        .field("error_pct", p.error_pct)
        .end_object();
  w.end_array().key("tables").begin_array();
  for (const estimate::UnfittedTable& t : u.tables) {
    w.begin_object().field("name", t.name).field("columns", t.columns);
    for (auto [key, range] :
         {std::pair{"bf16_error_pct", &t.bf16}, std::pair{"fp8_error_pct", &t.fp8},
          std::pair{"ratio_error_pct", &t.ratio}})
      w.key(key)
          .begin_object()
          .field("least", range->least_pct)
          .field("most", range->most_pct)
          .end_object();
    w.end_object();
  }
  w.end_array().key("summary").begin_array();
  for (const estimate::ErrorSummary* s : {&u.bf16, &u.fp8, &u.ratios})
    w.begin_object()
        .field("what", s->what)
        .field("count", s->count)
        .field("mean_abs_error_pct", s->mean_abs_pct)
        .field("signed_mean_error_pct", s->signed_mean_pct)
        .field("max_abs_error_pct", s->max_abs_pct)
        .field("within_5pct", s->within_5pct)
        .end_object();
  w.end_array().end_object();
  os << '\n';
}

}  // namespace lumos::report
