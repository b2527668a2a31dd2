// lumos bench batch: throughput of the batch replay on a synthetic graph shaped like the traces,
// against the reference replay of the same graph in the same run.
#include <cxxopts.hpp>

#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/help_text.hpp"
#include "cli/quiet_option.hpp"
#include "cli/unexpected_args.hpp"
#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "engine/batch_benchmark.hpp"
#include "estimate/estimate.hpp"
#include "graph/load_input.hpp"
#include "report/bench_report.hpp"

namespace lumos::cli {

namespace {

constexpr int64_t kMaxU32 = UINT32_MAX;
constexpr CountOption kNodes{"nodes", 2, 20000000}, kVariants{"variants", 1, kMaxU32},
    kSeed{"seed", 0, INT64_MAX}, kTile{"tile", 0, 4096};

// The graph `--graph` names: generated:MODEL, or an input as the other commands read it.
graph::Graph benchmark_graph(const std::string& spec) {
  const std::string prefix = "generated:";
  if (spec.rfind(prefix, 0) != 0) return graph::load_job(spec).graph;
  estimate::EstimateRequest r;
  r.model = model::preset(spec.substr(prefix.size()));
  r.cfg.tp = 8, r.cfg.pp = 8, r.cfg.dp = 16, r.cfg.gbs = 1024;
  r.cfg.sequence_parallel = r.cfg.distributed_optimizer = true;
  r.cfg.split_counts_embedding = r.model.layers % r.cfg.pp != 0;  // Llama 3 405B: 126 + 2
  return estimate::run_estimate(r, cost::embedded_db()).step.graph;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "estimate") return bench_estimate(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "whatif") return bench_whatif(argc - 1, argv + 1);
  if (argc < 2 || std::string(argv[1]) != "batch") {
    if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      std::cout
          << "usage: lumos bench batch --nodes N --variants V --backend cpu|cuda [--json]\n"
             "       lumos bench estimate [--runs N] [--json] [--db DIR] [--write-residuals F]\n"
             "       lumos bench whatif [--runs N] [--layers L] [--json]\n\n"
          << examples_section({"lumos bench batch --nodes 100000 --variants 1024 --backend cpu",
                               "lumos bench estimate --runs 5", "lumos bench whatif --layers 32"});
      return 0;
    }
    const std::string what = argc >= 2 ? argv[1] : "";
    throw InputError(
        "lumos bench: expected 'batch', 'estimate' or 'whatif'" +
        (what.empty()
             ? std::string()
             : ", not '" + what + "'" + did_you_mean(what, {"batch", "estimate", "whatif"})) +
        " (usage: lumos bench batch --nodes N --variants V --backend cpu|cuda, lumos bench "
        "estimate, or lumos bench whatif)");
  }
  cxxopts::Options o("lumos bench batch",
                     "Batch replay throughput on a synthetic graph shaped like the traces.");
  o.add_options()(kNodes.name, count_help("graph nodes", kNodes), count_value("100000"))(
      kVariants.name, count_help("variants per launch; nodes x variants at most 5e10", kVariants),
      count_value("1024"))("backend", "cpu or cuda (auto: the GPU when present)",
                           cxxopts::value<std::string>()->default_value("auto"))(
      kSeed.name, count_help("graph seed", kSeed), count_value("1"))(
      "graph",
      "replay this graph instead of the synthetic one: a trace, a folder of rank traces, a "
      ".lgraph file, or generated:MODEL (the preset at TP 8 x PP 8 x DP 16, 64 micro-batches)",
      cxxopts::value<std::string>())(
      "project-gpu", "GPU of the CUDA backend's projected rate (a roofline, not a measurement)",
      cxxopts::value<std::string>()->default_value("h200"))(
      kTile.name,
      count_help("CPU backend: variants per tile (0: chosen from the program's working set)",
                 kTile),
      count_value("0"))(
      "no-path",
      "finish times only, without the critical path's composition (what sweeps run; CPU and "
      "CUDA backends, and the CUDA projection)")("json", "print JSON")("h,help", "show this help");
  add_quiet_option(o);
  const auto a = parse_options(o, argc - 1, argv + 1);
  if (a.count("help"))
    return std::cout << help_with_examples(
                            o, {"lumos bench batch --nodes 100000 --variants 1024 --backend cpu",
                                "lumos bench batch --graph generated:gpt3-175b --no-path --json"})
                     << '\n',
           0;
  refuse_unexpected_args(a, "lumos bench batch");
  engine::BatchBenchmarkRequest req;
  req.nodes = static_cast<uint32_t>(count_of(a, kNodes, "lumos bench batch: "));
  req.variants = static_cast<uint32_t>(count_of(a, kVariants, "lumos bench batch: "));
  req.backend = engine::parse_backend(a["backend"].as<std::string>());
  LUMOS_EXPECT(req.backend != engine::Backend::kReference,
               "lumos bench batch: the reference is what the backend is compared with");
  req.seed = static_cast<uint64_t>(count_of(a, kSeed, "lumos bench batch: "));
  req.project_gpu = a["project-gpu"].as<std::string>();
  req.tile = static_cast<uint32_t>(count_of(a, kTile, "lumos bench batch: "));
  req.critical_path = a.count("no-path") == 0;
  graph::Graph other;
  if (a.count("graph")) {
    other = benchmark_graph(a["graph"].as<std::string>());
    req.graph = &other;
  }
  Progress progress("phases", quiet(a));
  req.progress = progress.fn();
  const engine::BatchBenchmark b = engine::run_batch_benchmark(req);
  if (a.count("json"))
    report::batch_benchmark_json(std::cout, b);
  else
    report::batch_benchmark_text(std::cout, b);
  return 0;
}

}  // namespace lumos::cli
