// lumos replay [TRACE|GRAPH.lgraph]: replay a trace and compare with what was measured.
#include <cxxopts.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/replay_multi_rank.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "engine/engine.hpp"
#include "replay/critical_path.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "report/timeline_writer.hpp"
#include "whatif/gemm_pricing.hpp"
#include "whatif/gpu_variants.hpp"
#include "whatif/transplant.hpp"

namespace lumos::cli {
namespace {

using replay::Breakdown;

struct Report {
  std::vector<replay::StepTime> steps;
  Breakdown replayed, measured;
  std::vector<replay::StreamBusy> streams;
  replay::CriticalPath cp;
  std::optional<whatif::TransplantResult> transplant;
  std::string backend;
};

void add(Breakdown* into, const Breakdown& b) {
  into->window_us += b.window_us;
  into->exposed_compute_us += b.exposed_compute_us;
  into->overlapped_us += b.overlapped_us;
  into->exposed_comm_us += b.exposed_comm_us;
  into->other_us += b.other_us;
}

void write_breakdown(common::JsonWriter& w, const Breakdown& b) {
  w.begin_object();
  w.field("window_us", b.window_us);
  w.field("exposed_compute_us", b.exposed_compute_us);
  w.field("overlapped_us", b.overlapped_us);
  w.field("exposed_comm_us", b.exposed_comm_us);
  w.field("other_us", b.other_us);
  w.end_object();
}

void print_json(const LoadedInput& in, const Report& rep) {
  const graph::Graph& g = in.graph;
  common::JsonWriter w(std::cout);
  w.begin_object();
  w.field("input", in.label);
  w.field("backend", rep.backend);
  w.field("rank", g.rank);
  w.key("graph").begin_object();
  w.field("nodes", g.num_nodes()).field("edges", g.num_edges()).field("wavefronts", g.num_waves());
  w.end_object();
  w.key("steps").begin_array();
  for (const auto& s : rep.steps) {
    w.begin_object();
    w.field("name", s.name).field("rank", s.rank).field("measured_us", s.measured_us);
    w.field("replayed_us", s.replayed_us).field("error_pct", s.error_pct);
    w.end_object();
  }
  w.end_array();
  w.key("breakdown");
  write_breakdown(w, rep.replayed);
  w.key("measured_breakdown");
  write_breakdown(w, rep.measured);
  w.key("streams").begin_array();
  for (const auto& s : rep.streams) {
    w.begin_object();
    w.field("device", s.device)
        .field("stream", s.stream)
        .field("busy_us", s.busy_us)
        .field("ops", s.ops);
    w.end_object();
  }
  w.end_array();
  w.key("critical_path").begin_object();
  w.field("mode", rep.cp.mode == replay::CriticalPathMode::kTiming ? "timing" : "hta");
  w.field("length_us", rep.cp.length_us).field("weight_us", rep.cp.weight_us);
  w.field("nodes", static_cast<uint64_t>(rep.cp.nodes.size()));
  w.field("cpu_us", rep.cp.by_class_us[static_cast<int>(graph::NodeClass::kCpu)]);
  w.field("compute_us", rep.cp.by_class_us[static_cast<int>(graph::NodeClass::kCompute)]);
  w.field("comm_us", rep.cp.by_class_us[static_cast<int>(graph::NodeClass::kComm)]);
  w.field("memory_us", rep.cp.by_class_us[static_cast<int>(graph::NodeClass::kMemory)]);
  w.field("lag_us", rep.cp.lag_us);
  w.key("gpu_ops").begin_array();
  for (graph::NodeId v : rep.cp.nodes) {
    if (g.cls[v] == graph::NodeClass::kCpu) continue;
    w.begin_object()
        .field("name", g.names[g.name[v]])
        .field("trace_event", g.event[v])
        .end_object();
  }
  w.end_array();
  w.end_object();
  if (rep.transplant) {
    const auto& t = *rep.transplant;
    w.key("transplant").begin_object();
    w.field("from", t.from).field("to", t.to).field("predicted_us", t.predicted_us);
    w.field("measured_us", t.measured_us).field("error_pct", t.error_pct);
    w.field("naive_us", t.naive_us).field("naive_error_pct", t.naive_error_pct);
    w.field("matched_fraction", t.matched_fraction);
    w.end_object();
  }
  w.end_object();
  std::cout << '\n';
}

void print_breakdown_line(const char* label, const Breakdown& b) {
  auto pct = [&](double v) { return b.window_us > 0 ? v / b.window_us * 100.0 : 0.0; };
  std::printf(
      "%-10s exposed compute %10.1f us (%4.1f%%)  overlapped %10.1f us (%4.1f%%)  exposed comm "
      "%10.1f us (%4.1f%%)  other %10.1f us (%4.1f%%)\n",
      label, b.exposed_compute_us, pct(b.exposed_compute_us), b.overlapped_us, pct(b.overlapped_us),
      b.exposed_comm_us, pct(b.exposed_comm_us), b.other_us, pct(b.other_us));
}

void print_text(const LoadedInput& in, const Report& rep) {
  const graph::Graph& g = in.graph;
  std::printf("lumos replay: %s (rank %d; %u nodes, %u edges, %u wavefronts; %s backend)\n",
              in.label.c_str(), g.rank, g.num_nodes(), g.num_edges(), g.num_waves(),
              rep.backend.c_str());
  std::printf("\n%-24s %6s %14s %14s %9s\n", "step", "rank", "measured_us", "replayed_us", "error");
  for (const auto& s : rep.steps)
    std::printf("%-24s %6d %14.1f %14.1f %8.3f%%\n", s.name.c_str(), s.rank, s.measured_us,
                s.replayed_us, s.error_pct);
  std::printf("\nbreakdown over the steps' windows (compute includes memcpy and memset):\n");
  print_breakdown_line("replayed", rep.replayed);
  print_breakdown_line("measured", rep.measured);
  std::printf("\nbusy time per stream (replayed):\n");
  for (const auto& s : rep.streams)
    std::printf("  GPU %lld stream %-6lld %14.1f us  %7u ops\n", static_cast<long long>(s.device),
                static_cast<long long>(s.stream), s.busy_us, s.ops);
  const auto& cp = rep.cp;
  std::printf(
      "\ncritical path (%s): %.1f us over %zu nodes: cpu %.1f us, compute %.1f us, comm %.1f us, "
      "memory %.1f us, lags %.1f us\n",
      cp.mode == replay::CriticalPathMode::kTiming ? "timing" : "HTA weights", cp.length_us,
      cp.nodes.size(), cp.by_class_us[static_cast<int>(graph::NodeClass::kCpu)],
      cp.by_class_us[static_cast<int>(graph::NodeClass::kCompute)],
      cp.by_class_us[static_cast<int>(graph::NodeClass::kComm)],
      cp.by_class_us[static_cast<int>(graph::NodeClass::kMemory)], cp.lag_us);
  if (rep.transplant) {
    const auto& t = *rep.transplant;
    std::printf(
        "\ntransplant %s -> %s: predicted %.1f us, measured %.1f us, error %.3f%% (naive guess "
        "%.1f us, error %.3f%%); %.1f%% of nodes matched\n",
        t.from.c_str(), t.to.c_str(), t.predicted_us, t.measured_us, t.error_pct, t.naive_us,
        t.naive_error_pct, t.matched_fraction * 100.0);
  }
}

}  // namespace

int cmd_replay(int argc, char** argv) {
  cxxopts::Options opts(
      "lumos replay",
      "Replay a PyTorch profiler (Kineto) trace or a .lgraph file and compare the "
      "replayed iteration time with the measured one.\nWith no input, replays the "
      "embedded demo trace.");
  opts.positional_help("[TRACE.json[.gz] | GRAPH.lgraph | DIR of per-rank traces]");
  opts.add_options()("input", "trace or graph file", cxxopts::value<std::string>())(
      "json", "print the report as JSON")(
      "timeline", "write the replayed timeline as Chrome-trace JSON (opens in Perfetto)",
      cxxopts::value<std::string>())("from-step", "transplant: build the graph of ProfilerStep#M",
                                     cxxopts::value<int64_t>())(
      "predict-step", "transplant: predict ProfilerStep#N from it", cxxopts::value<int64_t>())(
      "critical-path",
      "critical path convention: hta (work only, as HTA) or timing (what set each start)",
      cxxopts::value<std::string>()->default_value("hta"))(
      "backend", "engine for the step times: auto (GPU when present), reference, cpu or cuda",
      cxxopts::value<std::string>()->default_value("auto"))(
      "speed",
      "what-if: per-class speed factors, e.g. compute=2,comm=0.5 (cpu, compute, comm, memory)",
      cxxopts::value<std::string>())(
      "slow-rank", "multi-rank what-if: scale rank R's compute, R:FACTOR (repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "skew", "multi-rank what-if: delay rank R's start by US microseconds, R:US (repeatable)",
      cxxopts::value<std::vector<std::string>>())("h,help", "show this help");
  opts.parse_positional({"input"});
  const auto args = opts.parse(argc, argv);
  if (args.count("help")) {
    std::cout << opts.help() << '\n';
    return 0;
  }
  const bool want_transplant = args.count("from-step") || args.count("predict-step");
  LUMOS_EXPECT(!want_transplant || (args.count("from-step") && args.count("predict-step")),
               "lumos replay: --from-step and --predict-step go together");
  const std::string path = args.count("input") ? args["input"].as<std::string>() : "";
  if (!path.empty() && std::filesystem::is_directory(path)) {
    LUMOS_EXPECT(!want_transplant,
                 "lumos replay: transplant works on one rank's trace, not a folder");
    MultiRankOptions mo;
    mo.json = args.count("json") > 0;
    if (args.count("timeline")) mo.timeline = args["timeline"].as<std::string>();
    if (args.count("slow-rank")) mo.slow_ranks = args["slow-rank"].as<std::vector<std::string>>();
    if (args.count("skew")) mo.skews = args["skew"].as<std::vector<std::string>>();
    return replay_multi_rank(path, mo);
  }
  LUMOS_EXPECT(!args.count("slow-rank") && !args.count("skew"),
               "lumos replay: --slow-rank and --skew need a folder of per-rank traces");
  LoadedInput in = load_input(path);
  LUMOS_EXPECT(!want_transplant || in.table.has_value(),
               in.label + ": transplant needs the trace itself, not a .lgraph file");

  // What-if speed factors, one variant; the reference replay gives the details (breakdown,
  // critical path, timeline) and the chosen backend the step times.
  replay::VariantBatch variant = replay::VariantBatch::identity(1);
  if (args.count("speed")) {
    std::string spec = args["speed"].as<std::string>();
    size_t pos = 0;
    while (pos <= spec.size()) {
      const size_t comma = std::min(spec.find(',', pos), spec.size());
      const std::string item = spec.substr(pos, comma - pos);
      const size_t eq = item.find('=');
      LUMOS_EXPECT(eq != std::string::npos,
                   "lumos replay: --speed: expected class=factor, got '" + item + "'");
      const std::string cls = item.substr(0, eq);
      char* end = nullptr;
      const double factor = std::strtod(item.c_str() + eq + 1, &end);
      LUMOS_EXPECT(end && *end == '\0' && factor > 0 && std::isfinite(factor),
                   "lumos replay: --speed: factor of '" + cls + "' must be a positive number");
      int c = -1;
      for (int k = 1; k < replay::kNumNodeClasses; ++k)
        if (cls == graph::to_string(static_cast<graph::NodeClass>(k))) c = k;
      LUMOS_EXPECT(c > 0, "lumos replay: --speed: unknown class '" + cls +
                              "' (expected cpu, compute, comm or memory)");
      LUMOS_EXPECT(static_cast<float>(factor) > 0 && std::isfinite(static_cast<float>(factor)),
                   "lumos replay: --speed: factor of '" + cls + "' is out of range");
      variant.speed[c][0] = static_cast<float>(factor);
      pos = comma + 1;
    }
  }
  std::vector<double> dur(in.graph.num_nodes());
  for (graph::NodeId v = 0; v < in.graph.num_nodes(); ++v)
    dur[v] = in.graph.dur_us[v] / variant.speed[static_cast<int>(in.graph.cls[v])][0];
  const replay::ReplayResult r = replay::reference_replay(in.graph, &dur);
  Report rep;
  rep.steps = replay::step_times(in.graph, r);
  const engine::Backend backend = engine::parse_backend(args["backend"].as<std::string>());
  rep.backend = "reference";
  if (backend != engine::Backend::kReference) {
    const replay::BatchResult br = engine::batch_replay(in.graph, variant, backend);
    rep.backend = br.backend;
    for (size_t k = 0; k < rep.steps.size(); ++k) {
      rep.steps[k].replayed_us = br.step_us[k][0];
      const double m = rep.steps[k].measured_us;
      rep.steps[k].error_pct = m > 0 ? (rep.steps[k].replayed_us - m) / m * 100.0 : 0.0;
    }
  }
  for (size_t k = 0; k < in.graph.steps.size(); ++k) {
    const auto& st = in.graph.steps[k];
    const double rb = r.start_us[st.marker];
    const double mb = in.graph.measured_start_us[st.marker];
    const int32_t filter = static_cast<int32_t>(k);
    add(&rep.replayed, replay::breakdown(in.graph, r.start_us, r.finish_us, filter, rb,
                                         rb + rep.steps[k].replayed_us));
    std::vector<double> mfinish(in.graph.num_nodes());
    for (graph::NodeId v = 0; v < in.graph.num_nodes(); ++v)
      mfinish[v] = in.graph.measured_finish_us(v);
    add(&rep.measured, replay::breakdown(in.graph, in.graph.measured_start_us, mfinish, filter, mb,
                                         mb + st.measured_us));
  }
  rep.streams = replay::stream_busy(in.graph, r);
  const std::string cp_mode = args["critical-path"].as<std::string>();
  LUMOS_EXPECT(cp_mode == "hta" || cp_mode == "timing",
               "lumos replay: --critical-path: expected hta or timing, got '" + cp_mode + "'");
  rep.cp = replay::critical_path(in.graph, r, -1,
                                 cp_mode == "timing" ? replay::CriticalPathMode::kTiming
                                                     : replay::CriticalPathMode::kHtaWeights);
  if (want_transplant)
    rep.transplant = whatif::transplant(*in.table, args["from-step"].as<int64_t>(),
                                        args["predict-step"].as<int64_t>());
  if (args.count("timeline"))
    report::write_timeline(in.graph, r, args["timeline"].as<std::string>());
  if (args.count("json"))
    print_json(in, rep);
  else
    print_text(in, rep);
  return 0;
}

}  // namespace lumos::cli
