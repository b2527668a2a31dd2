// lumos bench batch: throughput of the batch replay on a synthetic graph shaped like the traces,
// against the reference replay of the same graph in the same run.
#include <cxxopts.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "engine/engine.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "estimate") return bench_estimate(argc - 1, argv + 1);
  if (argc < 2 || std::string(argv[1]) != "batch") {
    if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      std::cout << "usage: lumos bench batch --nodes N --variants V --backend cpu|cuda [--json]\n"
                   "       lumos bench estimate [--runs N] [--json]\n";
      return 0;
    }
    throw InputError(
        "lumos bench: expected 'batch' or 'estimate' (usage: lumos bench batch --nodes N "
        "--variants V --backend cpu|cuda, or lumos bench estimate)");
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
  const uint32_t nodes = a["nodes"].as<uint32_t>(), variants = a["variants"].as<uint32_t>();
  LUMOS_EXPECT(nodes >= 2 && variants >= 1,
               "lumos bench batch: --nodes must be at least 2 and --variants at least 1");
  engine::Backend backend = engine::parse_backend(a["backend"].as<std::string>());
  if (backend == engine::Backend::kAuto)
    backend = engine::cuda_available() ? engine::Backend::kCuda : engine::Backend::kCpu;
  LUMOS_EXPECT(backend != engine::Backend::kReference,
               "lumos bench batch: the reference is what the backend is compared with");
  const graph::Graph g = graph::synthetic_graph(nodes, a["seed"].as<uint64_t>());
  // Random speed factors between 0.5x and 2x per class and variant.
  replay::VariantBatch b = replay::VariantBatch::identity(variants);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> f(0.5f, 2.0f);
  for (auto& s : b.speed)
    for (auto& x : s) x = f(rng);
  // Reference: one variant at a time; repeat until the timing is long enough to trust.
  const graph::Successors succ = graph::successors_of(g);
  int ref_runs = 0;
  auto t0 = std::chrono::steady_clock::now();
  do {
    replay::reference_replay(g, succ);
    ++ref_runs;
  } while (seconds_since(t0) < 0.3);
  const double ref_nodes_per_s = static_cast<double>(g.num_nodes()) * ref_runs / seconds_since(t0);
  // The batch, warm once, then timed.
  engine::batch_replay(g, b, backend);
  int runs = 0;
  t0 = std::chrono::steady_clock::now();
  do {
    engine::batch_replay(g, b, backend);
    ++runs;
  } while (seconds_since(t0) < 1.0);
  const double secs = seconds_since(t0) / runs;
  const double nv_per_s = static_cast<double>(g.num_nodes()) * variants / secs;
  // State traffic per node-variant: predecessor finishes read, the winner's two path sums, the
  // node's finish and sums written, its speed factor read.
  const double bytes_per_update = 8.0 * g.num_edges() / g.num_nodes() + 8 + 16 + 4;
  const double bytes_per_s = nv_per_s * bytes_per_update;
  // The machine's own copy bandwidth in the same run (256 MiB, read + write counted), for the
  // CPU backend's fraction of what memory allows.
  double copy_bytes_per_s = 0;
  if (backend == engine::Backend::kCpu) {
    std::vector<char> src(256u << 20, 1), dst(256u << 20, 0);
    int copies = 0;
    t0 = std::chrono::steady_clock::now();
    do {
      std::memcpy(dst.data(), src.data(), src.size());
      ++copies;
    } while (seconds_since(t0) < 0.3);
    copy_bytes_per_s = 2.0 * src.size() * copies / seconds_since(t0);
  }
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object()
        .field("backend", engine::to_string(backend))
        .field("nodes", g.num_nodes())
        .field("edges", g.num_edges());
    w.field("variants", variants)
        .field("seconds_per_launch", secs)
        .field("node_variants_per_s", nv_per_s);
    w.field("bytes_per_s", bytes_per_s).field("reference_nodes_per_s", ref_nodes_per_s);
    w.field("vs_reference", nv_per_s / ref_nodes_per_s);
    if (copy_bytes_per_s > 0)
      w.field("machine_copy_bytes_per_s", copy_bytes_per_s)
          .field("fraction_of_copy_bandwidth", bytes_per_s / copy_bytes_per_s);
    w.end_object();
    std::cout << '\n';
  } else {
    std::printf(
        "batch %s: %u nodes x %u variants in %.4f s: %.3g node-variants/s, %.3g B/s; reference "
        "%.3g nodes/s; %.1fx the reference per variant\n",
        engine::to_string(backend), g.num_nodes(), variants, secs, nv_per_s, bytes_per_s,
        ref_nodes_per_s, nv_per_s / ref_nodes_per_s);
    if (copy_bytes_per_s > 0)
      std::printf("machine memcpy %.3g B/s; the replay moves %.0f%% of that\n", copy_bytes_per_s,
                  100.0 * bytes_per_s / copy_bytes_per_s);
  }
  return 0;
}

}  // namespace lumos::cli
