// lumos bench batch: throughput of the batch replay on a synthetic graph shaped like the traces,
// against the reference replay of the same graph in the same run.
#include <cxxopts.hpp>

#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "engine/batch_benchmark.hpp"
#include "report/bench_report.hpp"

namespace lumos::cli {

int cmd_bench(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "estimate") return bench_estimate(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "whatif") return bench_whatif(argc - 1, argv + 1);
  if (argc < 2 || std::string(argv[1]) != "batch") {
    if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      std::cout << "usage: lumos bench batch --nodes N --variants V --backend cpu|cuda [--json]\n"
                   "       lumos bench estimate [--runs N] [--json]\n"
                   "       lumos bench whatif [--runs N] [--layers L] [--json]\n";
      return 0;
    }
    throw InputError(
        "lumos bench: expected 'batch', 'estimate' or 'whatif' (usage: lumos bench batch --nodes N "
        "--variants V --backend cpu|cuda, lumos bench estimate, or lumos bench whatif)");
  }
  cxxopts::Options o("lumos bench batch",
                     "Batch replay throughput on a synthetic graph shaped like the traces.");
  o.add_options()("nodes", "graph nodes", cxxopts::value<uint32_t>()->default_value("100000"))(
      "variants", "variants per launch", cxxopts::value<uint32_t>()->default_value("1024"))(
      "backend", "cpu or cuda (auto: the GPU when present)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "seed", "graph seed", cxxopts::value<uint64_t>()->default_value("1"))("json", "print JSON")(
      "h,help", "show this help");
  const auto a = o.parse(argc - 1, argv + 1);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  engine::BatchBenchmarkRequest req;
  req.nodes = a["nodes"].as<uint32_t>();
  req.variants = a["variants"].as<uint32_t>();
  LUMOS_EXPECT(req.nodes >= 2 && req.variants >= 1,
               "lumos bench batch: --nodes must be at least 2 and --variants at least 1");
  req.backend = engine::parse_backend(a["backend"].as<std::string>());
  LUMOS_EXPECT(req.backend != engine::Backend::kReference,
               "lumos bench batch: the reference is what the backend is compared with");
  req.seed = a["seed"].as<uint64_t>();
  const engine::BatchBenchmark b = engine::run_batch_benchmark(req);
  if (a.count("json"))
    report::batch_benchmark_json(std::cout, b);
  else
    report::batch_benchmark_text(std::cout, b);
  return 0;
}

}  // namespace lumos::cli
