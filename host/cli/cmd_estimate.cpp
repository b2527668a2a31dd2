// lumos estimate / lumos generate: a training iteration of a GPT or Llama model under a Megatron
// layout, from the model description alone (no trace). `estimate` replays the generated graph and
// reports; `generate` also writes it as one Kineto trace per pipeline stage.
#include <cxxopts.hpp>

#include <algorithm>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/estimate_search.hpp"
#include "cli/headroom_option.hpp"
#include "cli/help_text.hpp"
#include "cli/layout_options.hpp"
#include "cli/path_options.hpp"
#include "cli/quiet_option.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/heap_tuning.hpp"
#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "cost/size_units.hpp"
#include "estimate/estimate.hpp"
#include "estimate/generated_trace.hpp"
#include "estimate/layout_search.hpp"
#include "estimate/term_effects.hpp"
#include "report/estimate_report.hpp"
#include "report/search_report.hpp"
#include "report/terms_report.hpp"

namespace lumos::cli {
namespace {

using namespace lumos::model;
using namespace lumos::estimate;

int run(int argc, char** argv, bool generate) {
  cxxopts::Options o(generate ? "lumos generate" : "lumos estimate",
                     generate ? "Write a model-driven training iteration as Kineto traces, one "
                                "per pipeline stage (read back by `lumos replay DIR`)"
                              : "Estimate a training iteration of a GPT or Llama model without a "
                                "trace");
  layout_options(o);
  add_quiet_option(o);
  if (generate)
    o.add_options()("o,output",
                    "output folder (new or empty; written as .NAME.tmp.PID beside it and renamed "
                    "at the end; SIGINT/SIGTERM remove it, and leftovers of dead processes are "
                    "swept)",
                    cxxopts::value<std::string>())(
        "max-output-bytes",
        "largest set of traces to write, estimated from the graph's size before anything is "
        "built or written (units: 512MiB, 8GiB)",
        cxxopts::value<std::string>()->default_value("2GiB"))(
        "tp-comm-stream",
        "shared | separate: tensor-parallel collectives on the compute stream, or each on a stream "
        "of its own that the compute stream waits for",
        cxxopts::value<std::string>()->default_value("shared"))(
        "group-names",
        "roles | numbers: process groups named by role (tp/stage0), or numbered as PyTorch "
        "names groups a job does not name (0, 1, ...)",
        cxxopts::value<std::string>()->default_value("roles"));
  if (!generate)
    o.add_options()("search",
                    "search layouts of the model on --gpus GPUs (degrees, micro-batch, "
                    "interleaving, recomputation) and rank those that fit")(
        kGpus.name, count_help("GPUs for --search", kGpus), count_value())(
        "search-memory",
        "graphs built at once stay within this (units: 768MiB, 4GiB); a layout whose graph "
        "(layers folded) alone needs more counts as too large, a top layout whose whole graph "
        "needs more is shown without its breakdown",
        cxxopts::value<std::string>()->default_value("768MiB"))(
        kTop.name,
        count_help("layouts to print with --search, each estimated in full (bubble, exposed comm)",
                   kTop),
        count_value("10"))(
        "csv",
        "with --search, write every layout that fits to this CSV file, in the sweep's columns (- "
        "prints it in place of the report)",
        cxxopts::value<std::string>())(
        "explain",
        "list the step's named terms (stack factor, slowest GPU, FP8 fast accumulation, FP8 casts "
        "and scale updates, FP8 gathers, reduce-scatters and parameter gathers, TP userbuffers, "
        "overlap contention, optimizer, gradient accumulation, host launches), each with its "
        "kernels_db source and what it adds to the step (estimated again without it)");
  if (!generate) add_min_headroom_option(o, "with --search, ");
  const auto a = parse_options(o, argc, argv);
  if (a.count("help")) {
    std::cout << (generate
                      ? help_with_examples(o, {"lumos generate --model gpt3-15b --tp 2 --pp 2 --dp "
                                               "4 -o traces/  # one trace per stage",
                                               "lumos replay traces/  # then replay them as a job"})
                      : help_with_examples(o, {"lumos estimate --model gpt3-175b --gpu h100 --tp 8 "
                                               "--pp 8 --dp 16 --gbs 1536  # one layout",
                                               "lumos estimate --search --model gpt3-175b --gpus "
                                               "1024 --gbs 1536 --top 5  # best layouts",
                                               "lumos estimate --model llama3-70b --gpu h200 --tp "
                                               "8 --pp 4 --dp 8 --json  # as JSON"}))
              << '\n';
    return 0;
  }
  refuse_unexpected_args(a, generate ? "lumos generate" : "lumos estimate");
  if (generate && !a.count("output")) throw InputError("lumos generate: -o FOLDER is required");
  check_paths(generate ? "lumos generate" : "lumos estimate", a, {kModelFileInput, kDbInput},
              {{"output", "-o"}, {"csv", "--csv"}});
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  const bool explain = !generate && a.count("explain");
  LUMOS_EXPECT(!explain || !a.count("search"),
               "lumos estimate: --explain goes with one layout, not --search");
  if (!generate && a.count("search")) return run_estimate_search(a, db);
  if (!generate && (a.count("gpus") || a.count("csv") || a.count("top") ||
                    a.count("search-memory") || a.count("min-headroom")))
    throw InputError(
        "lumos estimate: --gpus, --top, --csv, --search-memory and --min-headroom go with "
        "--search");
  EstimateRequest req = request_from(a);
  estimate::check_named_layout(req.cfg,
                               db.stack(req.cfg.stack.empty() ? db.default_stack : req.cfg.stack));
  StageTraceOptions names;
  if (generate) {
    const std::string text = a["max-output-bytes"].as<std::string>();
    const double max_bytes = cost::parse_bytes(text, "--max-output-bytes");
    LUMOS_EXPECT(max_bytes >= 1,
                 "--max-output-bytes: expected at least 1 byte, got '" + text + "'");
    // Counted past the cap only as far as needed to know it is passed.
    req.count_nodes_up_to = static_cast<uint64_t>(max_bytes / kTraceBytesPerNode) + 1;
    req.check_nodes = [max_bytes](uint64_t nodes) { check_trace_bytes(nodes, max_bytes); };
    const std::string stream = a["tp-comm-stream"].as<std::string>();
    const std::string groups = a["group-names"].as<std::string>();
    LUMOS_EXPECT(
        stream == "shared" || stream == "separate",
        "lumos generate: --tp-comm-stream: expected shared or separate, got '" + stream + "'");
    LUMOS_EXPECT(groups == "roles" || groups == "numbers",
                 "lumos generate: --group-names: expected roles or numbers, got '" + groups + "'");
    req.options.tp_comm_stream = stream == "separate";
    names.numbered_groups = groups == "numbers";
  }
  // Only written traces need a node per kernel; an estimate folds the steady state.
  req.fold_microbatches = !generate;
  Progress written("stage traces written", quiet(a));
  if (generate) names.progress = written.fn();
  const EstimateRun r = run_estimate(req, db);
  std::vector<std::string> files;
  if (generate)
    files =
        write_stage_traces(r.step, r.replay, a["output"].as<std::string>(), r.estimate.gpu, names);
  std::vector<estimate::TermEffect> terms;
  if (explain) terms = estimate::term_effects(req, db, r.estimate.step_time_us);
  if (a.count("json") && explain) {
    common::JsonWriter w(std::cout);
    w.begin_object();
    report::estimate_fields(w, r.estimate);
    report::terms_json(w, terms);
    w.end_object();
    std::cout << '\n';
  } else if (a.count("json")) {
    report::estimate_json(std::cout, r.estimate, files);
  } else {
    report::estimate_text(std::cout, r.estimate);
    if (explain) report::terms_text(std::cout, terms, r.estimate.step_time_us);
    for (const auto& f : files) std::cout << "  wrote " << f << '\n';
  }
  return 0;
}

}  // namespace

int cmd_estimate(int argc, char** argv) {
  return run(argc, argv, false);
}

int cmd_generate(int argc, char** argv) {
  return run(argc, argv, true);
}

}  // namespace lumos::cli
