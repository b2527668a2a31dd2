// lumos replay [TRACE | GRAPH.lgraph | DIR]: replay traced steps and compare with what was
// measured; a folder of per-rank traces is replayed as one job.
#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/help_text.hpp"
#include "cli/input_options.hpp"
#include "cli/path_options.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/heap_tuning.hpp"
#include "common/huge_pages.hpp"
#include "cost/size_units.hpp"
#include "estimate/trace_replay.hpp"
#include "report/build_warnings.hpp"
#include "report/replay_report.hpp"
#include "report/timeline_writer.hpp"
#include "report/utilization_csv.hpp"
#include "whatif/transplant.hpp"

namespace lumos::cli {
namespace {

constexpr CountOption kFromStep{"from-step", 0, INT32_MAX},
    kPredictStep{"predict-step", 0, INT32_MAX};

std::vector<std::string> all_of(const cxxopts::ParseResult& a, const char* key) {
  return a.count(key) ? a[key].as<std::vector<std::string>>() : std::vector<std::string>{};
}

bool wants_utilization(const cxxopts::ParseResult& a) {
  return a.count("utilization-bin") || a.count("utilization-csv");
}

// The utilization CSV goes to --utilization-csv FILE, else to standard output in place of the
// report. Returns whether it took standard output.
bool write_utilization(const cxxopts::ParseResult& a, const graph::Graph& g,
                       const replay::ReplayResult& r) {
  if (!wants_utilization(a)) return false;
  const double bin_us = cost::parse_duration_us(
      a.count("utilization-bin") ? a["utilization-bin"].as<std::string>() : "1ms",
      "lumos replay: --utilization-bin");
  const std::string to = a.count("utilization-csv") ? a["utilization-csv"].as<std::string>() : "-";
  const auto series = replay::utilization_bins(g, r, bin_us);
  write_output(to, [&](std::ostream& os) { report::utilization_csv(os, series); });
  return is_stdout(to);
}

int replay_folder(const std::string& dir, const cxxopts::ParseResult& a) {
  whatif::StragglerEdits edits;
  for (const std::string& s : all_of(a, "slow-rank"))
    edits.slow.push_back(whatif::parse_rank_value(s, "--slow-rank"));
  for (const std::string& s : all_of(a, "skew"))
    edits.skew.push_back(whatif::parse_rank_value(s, "--skew"));
  const estimate::JobReplay j =
      estimate::replay_job(dir, edits, a.count("allow-partial") > 0,
                           a.count("speed") ? a["speed"].as<std::string>() : std::string());
  for (const std::string& w : j.job.warnings) std::cerr << "lumos replay: warning: " << w << '\n';
  if (a.count("timeline")) {
    report::write_timeline(j.job.graph, j.replay, a["timeline"].as<std::string>());
    if (is_stdout(a["timeline"].as<std::string>())) return 0;  // the timeline is the output
  }
  if (write_utilization(a, j.job.graph, j.replay)) return 0;  // the CSV is the output
  if (a.count("json"))
    report::job_json(std::cout, dir, j);
  else
    report::job_text(std::cout, dir, j);
  return 0;
}

}  // namespace

int cmd_replay(int argc, char** argv) {
  // A replay allocates its large blocks (the parser's index, the graph's arrays) once: huge pages
  // and freed memory kept for reuse save faulting them in (docs/design.md, "Reading traces").
  common::set_huge_pages_for_new(true);
  keep_freed_graph_memory();
  cxxopts::Options opts(
      "lumos replay",
      "Replay a PyTorch profiler (Kineto) trace or a .lgraph file and compare the "
      "replayed iteration time with the measured one.\nWith no input, replays the "
      "embedded demo trace.");
  opts.positional_help("[TRACE.json[.gz] | GRAPH.lgraph | DIR of per-rank traces]");
  opts.add_options()("input", "trace or graph file", cxxopts::value<std::string>())(
      "json", "print the report as JSON")(
      "timeline",
      "write the replayed timeline as Chrome-trace JSON (opens in Perfetto); - prints it "
      "in place of the report",
      cxxopts::value<std::string>())(
      kFromStep.name, count_help("transplant: build the graph of ProfilerStep#M", kFromStep),
      count_value())(kPredictStep.name,
                     count_help("transplant: predict ProfilerStep#N from it", kPredictStep),
                     count_value())(
      "critical-path",
      "critical path convention: hta (work only, as HTA) or timing (what set each start)",
      cxxopts::value<std::string>()->default_value("hta"))(
      "backend", "engine for the step times: auto (GPU when present), reference, cpu or cuda",
      cxxopts::value<std::string>()->default_value("auto"))(
      "speed",
      "what-if: per-class speed factors, e.g. compute=2,comm=0.5 (cpu, compute, comm, memory); "
      "a folder's ranks all take them",
      cxxopts::value<std::string>())(
      "slow-rank", "multi-rank what-if: scale rank R's compute, R:FACTOR (repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "skew", "multi-rank what-if: delay rank R's start by US microseconds, R:US (repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "allow-partial",
      "replay a folder that lacks some ranks of its world size (a warning names them)")(
      "utilization-bin",
      "GPU busy fraction per bin of this width (us, ms or s: 1ms), traced and replayed, as CSV "
      "(default bin with --utilization-csv: 1ms)",
      cxxopts::value<std::string>())(
      "utilization-csv",
      "write the utilization CSV to this file (default, or -: printed in place of the report)",
      cxxopts::value<std::string>())("h,help", "show this help");
  add_input_options(opts);
  opts.parse_positional({"input"});
  const auto args = parse_options(opts, argc, argv);
  if (args.count("help")) {
    std::cout << help_with_examples(
                     opts,
                     {"lumos replay  # the embedded demo trace",
                      "lumos replay trace.json.gz --timeline timeline.json  # for Perfetto",
                      "lumos replay ranks/ --slow-rank 3:1.2  # rank 3's compute 1.2x slower"})
              << '\n';
    return 0;
  }
  refuse_unexpected_args(args, "lumos replay", "one trace, graph file or folder of rank traces");
  apply_input_options(args);
  check_paths("lumos replay", args, {{"input", "the input"}},
              {{"timeline", "--timeline"}, {"utilization-csv", "--utilization-csv"}});
  const bool want_transplant = args.count("from-step") || args.count("predict-step");
  LUMOS_EXPECT(!want_transplant || (args.count("from-step") && args.count("predict-step")),
               "lumos replay: --from-step and --predict-step go together");
  if (args.count("timeline")) {  // before the replay: a bad path should not cost its time
    const std::string timeline = args["timeline"].as<std::string>();
    LUMOS_EXPECT(!is_stdout(timeline) || !args.count("json"),
                 "lumos replay: --timeline - and --json both write to standard output");
    if (!is_stdout(timeline)) check_output_path(timeline);
  }
  if (wants_utilization(args)) {  // before the replay, as the timeline
    const std::string to =
        args.count("utilization-csv") ? args["utilization-csv"].as<std::string>() : "-";
    const bool report_to_stdout =
        args.count("json") ||
        (args.count("timeline") && is_stdout(args["timeline"].as<std::string>()));
    LUMOS_EXPECT(!is_stdout(to) || !report_to_stdout,
                 "lumos replay: the utilization CSV takes standard output; give --utilization-csv "
                 "FILE with --json or --timeline -");
    if (!is_stdout(to)) check_output_path(to);
    if (args.count("utilization-bin"))
      cost::parse_duration_us(args["utilization-bin"].as<std::string>(),
                              "lumos replay: --utilization-bin");
  }
  const std::string path = args.count("input") ? args["input"].as<std::string>() : "";
  if (!path.empty() && std::filesystem::is_directory(path)) {
    LUMOS_EXPECT(!want_transplant,
                 "lumos replay: transplant works on one rank's trace, not a folder");
    return replay_folder(path, args);
  }
  LUMOS_EXPECT(!args.count("allow-partial"),
               "lumos replay: --allow-partial goes with a folder of per-rank traces");
  LUMOS_EXPECT(!args.count("slow-rank") && !args.count("skew"),
               "lumos replay: --slow-rank and --skew need a folder of per-rank traces");
  estimate::ReplayRequest req;
  if (args.count("speed")) req.speed = args["speed"].as<std::string>();
  req.backend = engine::parse_backend(args["backend"].as<std::string>());
  const std::string cp_mode = args["critical-path"].as<std::string>();
  LUMOS_EXPECT(cp_mode == "hta" || cp_mode == "timing",
               "lumos replay: --critical-path: expected hta or timing, got '" + cp_mode + "'");
  req.critical_path = cp_mode == "timing" ? replay::CriticalPathMode::kTiming
                                          : replay::CriticalPathMode::kHtaWeights;
  if (want_transplant)
    req.transplant = {count_of(args, kFromStep, "lumos replay: "),
                      count_of(args, kPredictStep, "lumos replay: ")};
  const graph::LoadedInput in = graph::load_input(path);
  report::build_warnings(std::cerr, in.stats);
  const estimate::ReplayAnswer a = estimate::replay_trace(in, req);
  if (a.transplant && !a.transplant->differences.empty())
    std::cerr << "lumos replay: " << whatif::structure_warning(*a.transplant) << '\n';
  if (args.count("timeline")) {
    report::write_timeline(in.graph, a.replay, args["timeline"].as<std::string>());
    if (is_stdout(args["timeline"].as<std::string>())) return 0;  // the timeline is the output
  }
  if (write_utilization(args, in.graph, a.replay)) return 0;  // the CSV is the output
  if (args.count("json"))
    report::replay_json(std::cout, in, a);
  else
    report::replay_text(std::cout, in, a);
  return 0;
}

}  // namespace lumos::cli
