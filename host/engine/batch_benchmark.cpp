#include "engine/batch_benchmark.hpp"

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "common/format.hpp"
#include "common/thread_pool.hpp"
#include "cost/kernels_db.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/batch_replay.hpp"
#include "replay/reference_replay.hpp"
#include "replay/replay_program.hpp"

namespace lumos::engine {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

BatchBenchmark run_batch_benchmark(const BatchBenchmarkRequest& req) {
  LUMOS_EXPECT((req.graph || req.nodes >= 2) && req.variants >= 1,
               "batch benchmark: at least 2 nodes and 1 variant");
  LUMOS_EXPECT(req.backend != Backend::kReference,
               "batch benchmark: the reference is what the backend is compared with");
  const Backend backend = req.backend != Backend::kAuto ? req.backend
                          : cuda_available()            ? Backend::kCuda
                                                        : Backend::kCpu;
  const uint64_t nodes = req.graph ? req.graph->num_nodes() : req.nodes;
  LUMOS_EXPECT(req.graph || nodes <= kMaxBenchNodes, "batch benchmark: --nodes " +
                                                         std::to_string(nodes) + ": at most " +
                                                         std::to_string(kMaxBenchNodes) + " nodes");
  const double node_variants = static_cast<double>(nodes) * req.variants;
  LUMOS_EXPECT(node_variants <= kMaxBenchNodeVariants,
               "batch benchmark: " + std::to_string(nodes) + " nodes x " +
                   std::to_string(req.variants) + " variants is " +
                   strprintf("%.3g", node_variants) + " node-variants per launch; at most " +
                   strprintf("%.0f", kMaxBenchNodeVariants));
  graph::Graph synthetic;
  if (!req.graph) synthetic = graph::synthetic_graph(req.nodes, req.seed);
  const graph::Graph& g = req.graph ? *req.graph : synthetic;
  // Random speed factors between 0.5x and 2x per class and variant.
  replay::VariantBatch b = replay::VariantBatch::identity(req.variants);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> f(0.5f, 2.0f);
  for (auto& s : b.speed)
    for (auto& x : s) x = f(rng);
  BatchBenchmark r;
  r.backend = to_string(backend);
  r.nodes = g.num_nodes();
  r.edges = g.num_edges();
  r.variants = req.variants;
  // Reference: one variant at a time; repeat until the timing is long enough to trust.
  const graph::Successors succ = graph::successors_of(g);
  int ref_runs = 0;
  auto t0 = std::chrono::steady_clock::now();
  do {
    replay::reference_replay(g, succ);
    ++ref_runs;
  } while (seconds_since(t0) < 0.3);
  r.reference_nodes_per_s = static_cast<double>(g.num_nodes()) * ref_runs / seconds_since(t0);
  if (req.progress) req.progress(1, kBenchmarkPhases);
  // The CPU backend's program is compiled once, as a sweep over one graph does.
  t0 = std::chrono::steady_clock::now();
  const replay::ReplayProgram program = replay::compile_program(g);
  r.compile_s = seconds_since(t0);
  if (req.progress) req.progress(2, kBenchmarkPhases);
  r.max_live = program.max_live;
  r.hot_registers = replay::hot_registers(program, g);
  r.projection = project_device_replay(g, program, cost::embedded_db().gpu(req.project_gpu),
                                       req.critical_path);
  // The CPU backend's tile, chosen once, as a caller replaying one graph many times would.
  const unsigned threads = worker_threads(0);
  const uint32_t tile = std::min(
      req.tile ? req.tile
               : replay::batch_cpu_tile(r.hot_registers, static_cast<uint32_t>(g.steps.size()),
                                        req.variants, threads, req.critical_path),
      req.variants);
  double kernel_s = 0;
  auto launch = [&]() {
    if (backend == Backend::kCpu)
      replay::batch_replay_cpu(g, b, tile, threads, nullptr, &program, req.critical_path);
    else
      kernel_s += batch_replay(g, b, backend, nullptr, req.critical_path).kernel_s;
  };
  // The batch, warm once, then timed.
  launch();
  if (req.progress) req.progress(3, kBenchmarkPhases);
  int runs = 0;
  kernel_s = 0;
  t0 = std::chrono::steady_clock::now();
  do {
    launch();
    ++runs;
  } while (seconds_since(t0) < 1.0);
  r.seconds_per_launch = seconds_since(t0) / runs;
  if (req.progress) req.progress(kBenchmarkPhases, kBenchmarkPhases);
  if (kernel_s > 0) {
    r.kernel_seconds_per_launch = kernel_s / runs;
    r.kernel_node_variants_per_s =
        static_cast<double>(g.num_nodes()) * req.variants / r.kernel_seconds_per_launch;
  }
  if (backend == Backend::kCpu) {
    // In flight: one tile per working thread, 16 B per register and variant.
    r.tile = tile;
    r.critical_path = req.critical_path;
    const uint64_t tiles = (uint64_t{req.variants} + tile - 1) / tile;
    r.state_bytes = (req.critical_path ? 16.0 : 8.0) * r.max_live * tile *
                    static_cast<double>(std::min<uint64_t>(threads, tiles));
    r.state_fraction = r.state_bytes / (8.0 * g.num_nodes() * req.variants);
  }
  r.node_variants_per_s = static_cast<double>(g.num_nodes()) * req.variants / r.seconds_per_launch;
  r.vs_reference = r.node_variants_per_s / r.reference_nodes_per_s;
  // Least state traffic per node-variant: predecessor finishes read, the winner's two path sums,
  // the node's finish and sums written, its slot factor read (a double).
  const double bytes_per_update =
      8.0 * g.num_edges() / g.num_nodes() + (req.critical_path ? 8 + 16 : 8) + 8;
  r.bytes_per_s = r.node_variants_per_s * bytes_per_update;
  // The machine's own copy bandwidth in the same run (256 MiB, read + write counted), for the
  // CPU backend's fraction of what memory allows.
  if (backend == Backend::kCpu) {
    std::vector<char> src(256u << 20, 1), dst(256u << 20, 0);
    int copies = 0;
    t0 = std::chrono::steady_clock::now();
    do {
      std::memcpy(dst.data(), src.data(), src.size());
      ++copies;
    } while (seconds_since(t0) < 0.3);
    r.machine_copy_bytes_per_s = 2.0 * src.size() * copies / seconds_since(t0);
    r.fraction_of_copy_bandwidth = r.bytes_per_s / r.machine_copy_bytes_per_s;
  }
  return r;
}

}  // namespace lumos::engine
