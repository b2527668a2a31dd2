// The CUDA backend's kernel body (replay/lanes_thread.hpp) started by the host launcher
// (common/launch.hpp), held to the CPU backend: the device code runs here, on machines without
// a GPU, on random DAGs (half with random model slots), every shared trace, generated GPT and Llama
// iterations, and with GEMM repricing. tests/cuda/ holds the same body on a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "graph/graph_builder.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/batch_replay.hpp"
#include "replay/replay_program.hpp"
#include "support/random_variants.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"
#include "whatif/gemm_pricing.hpp"
#include "whatif/gpu_variants.hpp"

using namespace lumos::replay;
using lumos::testing::random_variants;

namespace {

void expect_equal(const BatchResult& a, const BatchResult& b, const std::string& what) {
  ASSERT_EQ(a.variants, b.variants) << what;
  for (uint32_t v = 0; v < a.variants; ++v) {
    const double scale = std::max(1.0, std::fabs(b.makespan_us[v]));
    ASSERT_NEAR(a.makespan_us[v], b.makespan_us[v], 1e-9 * scale) << what << " variant " << v;
    ASSERT_NEAR(a.cp_compute_us[v], b.cp_compute_us[v], 1e-6 * scale) << what;
    ASSERT_NEAR(a.cp_comm_us[v], b.cp_comm_us[v], 1e-6 * scale) << what;
    for (size_t k = 0; k < a.step_us.size(); ++k)
      ASSERT_NEAR(a.step_us[k][v], b.step_us[k][v], 1e-9 * scale) << what << " step " << k;
  }
}

}  // namespace

// Registers in shared memory (as many as a block keeps), in the global plane or split between
// them; finish times alone; several blocks of threads, the last one partly past the batch; several
// tiles, the last one partial.
TEST(DeviceBody, EveryRegisterPlacementAndBothKernelsEqualTheCpuBackend) {
  std::mt19937 rng(77);
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const uint32_t nodes = 50 + static_cast<uint32_t>(rng() % 400);
    const auto g = lumos::graph::synthetic_graph(nodes, seed, 1 + static_cast<uint32_t>(rng() % 8));
    VariantBatch b = random_variants(1 + static_cast<uint32_t>(rng() % 700), rng);
    if (seed % 2) lumos::testing::add_random_slots(b, g, rng);
    const uint32_t max_live = compile_program(g).max_live;
    const BatchResult cpu = batch_replay_cpu(g, b);
    for (uint32_t shared : {0u, 1u, max_live / 2, UINT32_MAX}) {
      const std::string what = "seed " + std::to_string(seed) + ", " + std::to_string(shared) +
                               " of " + std::to_string(max_live) + " registers shared, " +
                               std::to_string(b.count) + " variants";
      // A tile width that splits the batch into several, the last one partial (0: one tile).
      const uint32_t tile = seed % 3 == 0 ? 0 : 1 + static_cast<uint32_t>(rng() % b.count);
      expect_equal(batch_replay_device_body(g, b, nullptr, true, shared, tile), cpu,
                   what + ", tiles of " + std::to_string(tile));
      BatchResult finish = batch_replay_device_body(g, b, nullptr, false, shared, tile);
      for (uint32_t v = 0; v < b.count; ++v) {
        ASSERT_EQ(finish.cp_compute_us[v], 0.0) << what;
        finish.cp_compute_us[v] = cpu.cp_compute_us[v], finish.cp_comm_us[v] = cpu.cp_comm_us[v];
      }
      expect_equal(finish, cpu, what + ", finish times alone");
      if (HasFatalFailure()) return;
    }
  }
}

TEST(DeviceBody, EqualsTheCpuBackendOnRandomDags) {
  std::mt19937 rng(314);
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng() % 300);
    const auto g =
        lumos::graph::synthetic_graph(nodes, seed, 1 + static_cast<uint32_t>(rng() % 8), 0.3);
    VariantBatch b = random_variants(1 + static_cast<uint32_t>(rng() % 9), rng);
    if (seed % 2 == 0) lumos::testing::add_random_slots(b, g, rng);
    expect_equal(batch_replay_device_body(g, b), batch_replay_cpu(g, b),
                 "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
  }
}

TEST(DeviceBody, EqualsTheCpuBackendOnGeneratedIterations) {
  std::mt19937 rng(9);
  for (const char* model : {"gpt3-15b", "llama3-8b"}) {
    lumos::estimate::EstimateRequest r;
    r.model = lumos::model::preset(model);
    r.model.layers = 8;
    r.cfg.tp = 2, r.cfg.pp = 4, r.cfg.dp = 2, r.cfg.interleave = 2, r.cfg.gbs = 16;
    const auto g = lumos::estimate::run_estimate(r, lumos::cost::embedded_db()).step.graph;
    const VariantBatch b = random_variants(40, rng);
    expect_equal(batch_replay_device_body(g, b), batch_replay_cpu(g, b), model);
  }
}

TEST(DeviceBody, EqualsTheCpuBackendOnEverySharedTraceAndWithGemmRepricing) {
  LUMOS_REQUIRE_TRACES();
  std::mt19937 rng(17);
  for (const auto& path : lumos::testing::shared_traces()) {
    const auto g = lumos::graph::build_graph(lumos::trace::load_trace(path)).graph;
    const VariantBatch b = random_variants(20, rng);
    expect_equal(batch_replay_device_body(g, b), batch_replay_cpu(g, b), path);
  }
  const auto& db = lumos::cost::embedded_db();
  const auto t =
      lumos::trace::load_trace(lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz");
  const auto g = lumos::graph::build_graph(t).graph;
  const std::vector<std::string> gpus = {"b200", "h100", "a100", "h200"};
  const VariantBatch b = lumos::whatif::variants_from_gpus(db, "b200", gpus);
  const GemmPricing p = lumos::whatif::gemm_pricing(g, t, db, "b200", gpus);
  ASSERT_GT(p.priced_nodes(), 50u);
  expect_equal(batch_replay_device_body(g, b, &p), batch_replay_cpu(g, b, 0, 0, &p), "priced");
}
