// Differential test of the CUDA batch backend against the CPU backend (the reference for it) on
// random graphs and variants, and of the device Pareto front against the host one. Skips with
// a message when no GPU is visible; scripts/device-check.sh runs it on a lent GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "batch_replay_cuda.hpp"
#include "cost/gemm_model.hpp"
#include "graph/synthetic_graph.hpp"
#include "pareto_cuda.hpp"
#include "replay/batch_replay.hpp"
#include "replay/pareto.hpp"
#include "support/random_variants.hpp"

using namespace lumos;

TEST(CudaBatchReplay, MatchesTheCpuBackendOnRandomGraphsAndVariants) {
  if (!cuda::gpu_present())
    GTEST_SKIP() << "no GPU visible to the CUDA runtime: the CUDA backend cannot run here";
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> f(0.25f, 4.0f);
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng() % 3000);
    const auto g = graph::synthetic_graph(nodes, seed);
    replay::VariantBatch b = replay::VariantBatch::identity(1 + static_cast<uint32_t>(rng() % 700));
    for (auto& s : b.speed)
      for (auto& x : s) x = f(rng);
    if (seed % 2 == 0) lumos::testing::add_random_slots(b, g, rng);  // half with model slots
    const auto gpu = cuda::batch_replay_cuda(g, b);
    const auto cpu = replay::batch_replay_cpu(g, b);
    for (uint32_t v = 0; v < b.count; ++v) {
      const double scale = std::max(1.0, cpu.makespan_us[v]);
      ASSERT_NEAR(gpu.makespan_us[v], cpu.makespan_us[v], 1e-9 * scale)
          << "seed " << seed << " variant " << v;
      ASSERT_NEAR(gpu.step_us[0][v], cpu.step_us[0][v], 1e-9 * scale);
      ASSERT_NEAR(gpu.cp_compute_us[v], cpu.cp_compute_us[v], 1e-5 * scale);
      ASSERT_NEAR(gpu.cp_comm_us[v], cpu.cp_comm_us[v], 1e-5 * scale);
    }
  }
}

TEST(CudaPareto, MatchesTheHostFront) {
  if (!cuda::gpu_present()) GTEST_SKIP() << "no GPU visible to the CUDA runtime";
  std::mt19937 rng(9);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = 1 + rng() % 5000;
    std::vector<double> a(n), b(n);
    for (size_t i = 0; i < n; ++i) a[i] = rng() % 50, b[i] = rng() % 50;
    EXPECT_EQ(cuda::pareto_front_2d_cuda(a, b), replay::pareto_front({a, b})) << trial;
  }
}

TEST(CudaBatchReplay, PricedGemmsMatchTheCpuBackend) {
  if (!cuda::gpu_present()) GTEST_SKIP() << "no GPU visible to the CUDA runtime";
  // Every other node of a random graph is a priced GEMM; variants alternate between GPUs.
  const auto g = graph::synthetic_graph(5000, 17);
  replay::GemmPricing p;
  p.node_key.assign(g.num_nodes(), -1);
  const auto& db = cost::embedded_db();
  const std::vector<std::string> names = {"h100", "a100", "b200"};
  for (const auto& n : names)
    for (int d = 0; d < cost::kNumDtypes; ++d)
      p.params.push_back(db.gpu(n).peak_tflops[d]
                             ? cost::gemm_core_params(db, db.gpu(n), static_cast<cost::Dtype>(d))
                             : cost::GemmCoreParams{});
  p.shape = {4096, 4096, 4096, 1, 1024, 8192, 2048, 1};
  p.dtype = {static_cast<uint8_t>(cost::Dtype::kBf16), static_cast<uint8_t>(cost::Dtype::kBf16)};
  for (int k = 0; k < 2; ++k)
    p.traced_us.push_back(cost::gemm_core_time(p.params[static_cast<int>(cost::Dtype::kBf16)],
                                               p.shape[4 * k], p.shape[4 * k + 1],
                                               p.shape[4 * k + 2], 1)
                              .time_us);
  for (graph::NodeId v = 1; v < g.num_nodes(); v += 2)
    p.node_key[v] = static_cast<int32_t>(v % 4 == 1);
  replay::VariantBatch b = replay::VariantBatch::identity(300);
  for (uint32_t v = 0; v < b.count; ++v) p.variant_gpu.push_back(static_cast<uint16_t>(v % 3));
  const auto cpu = replay::batch_replay_cpu(g, b, 64, 0, &p);
  // One tile, then tiles of 64 and of 7 (variant_gpu is read at absolute variant indices).
  for (const uint32_t width : {0u, 64u, 7u}) {
    const auto gpu = cuda::batch_replay_cuda(g, b, &p, width);
    for (uint32_t v = 0; v < b.count; ++v)
      ASSERT_NEAR(gpu.makespan_us[v], cpu.makespan_us[v], 1e-9 * cpu.makespan_us[v])
          << "tile width " << width << " variant " << v;
  }
}

TEST(CudaBatchReplay, ManyTilesMatchTheCpuBackend) {
  if (!cuda::gpu_present()) GTEST_SKIP() << "no GPU visible to the CUDA runtime";
  // Two steps, so step rows other than the first are read; the second starts at a node midway.
  auto g = graph::synthetic_graph(4000, 5);
  const graph::NodeId mid = g.num_nodes() / 2;
  g.steps.push_back({"second", 0, mid, 0.0});
  for (graph::NodeId n = mid; n < g.num_nodes(); ++n)
    if (g.step[n] >= 0) g.step[n] = 1;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> f(0.25f, 4.0f);
  replay::VariantBatch b = replay::VariantBatch::identity(333);
  for (auto& s : b.speed)
    for (auto& x : s) x = f(rng);
  const auto cpu = replay::batch_replay_cpu(g, b);
  // Widths of one variant, a warp, rows that are not whole warps, and a last tile of one.
  for (const uint32_t width : {1u, 32u, 37u, 128u, 332u}) {
    const auto gpu = cuda::batch_replay_cuda(g, b, nullptr, width);
    for (uint32_t v = 0; v < b.count; ++v) {
      SCOPED_TRACE("tile width " + std::to_string(width) + " variant " + std::to_string(v));
      const double scale = std::max(1.0, cpu.makespan_us[v]);
      ASSERT_NEAR(gpu.makespan_us[v], cpu.makespan_us[v], 1e-9 * scale);
      for (size_t k = 0; k < g.steps.size(); ++k)
        ASSERT_NEAR(gpu.step_us[k][v], cpu.step_us[k][v], 1e-9 * scale) << "step " << k;
      ASSERT_NEAR(gpu.cp_compute_us[v], cpu.cp_compute_us[v], 1e-5 * scale);
      ASSERT_NEAR(gpu.cp_comm_us[v], cpu.cp_comm_us[v], 1e-5 * scale);
    }
  }
}
