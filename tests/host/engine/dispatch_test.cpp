// The engine's public entry point: every backend gives the same numbers for the same batch, with
// GEMM repricing applied on each (it once reached only the CUDA backend).
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "engine/engine.hpp"
#include "graph/graph_builder.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"
#include "whatif/gemm_pricing.hpp"
#include "whatif/gpu_variants.hpp"

namespace {

using lumos::engine::Backend;

void expect_close(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t v = 0; v < a.size(); ++v)
    EXPECT_NEAR(a[v], b[v], 1e-6 * std::max(1.0, std::abs(b[v]))) << what << " variant " << v;
}

TEST(EngineDispatch, GemmRepricingAppliesOnEveryBackend) {
  LUMOS_REQUIRE_TRACES();
  const auto& db = lumos::cost::embedded_db();
  const auto t =
      lumos::trace::load_trace(lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz");
  const auto g = lumos::graph::build_graph(t).graph;
  const std::vector<std::string> gpus = {"a100", "h100", "b200"};
  const auto b = lumos::whatif::variants_from_gpus(db, "b200", gpus);
  const auto p = lumos::whatif::gemm_pricing(g, t, db, "b200", gpus);
  ASSERT_GT(p.priced_nodes(), 50u);
  const auto reference = lumos::engine::batch_replay(g, b, Backend::kReference, &p);
  const auto cpu = lumos::engine::batch_replay(g, b, Backend::kCpu, &p);
  const auto automatic = lumos::engine::batch_replay(g, b, Backend::kAuto, &p);
  expect_close(cpu.makespan_us, reference.makespan_us, "cpu vs reference");
  expect_close(automatic.makespan_us, reference.makespan_us, "auto vs reference");
  expect_close(cpu.cp_compute_us, reference.cp_compute_us, "critical-path compute");
  // Finish times alone: the same step times, no path composition.
  const auto finish = lumos::engine::batch_replay(g, b, Backend::kCpu, &p, false);
  expect_close(finish.makespan_us, reference.makespan_us, "finish times alone vs reference");
  for (const double c : finish.cp_compute_us) EXPECT_EQ(c, 0.0);
  if (lumos::engine::cuda_available()) {
    const auto gpu = lumos::engine::batch_replay(g, b, Backend::kCuda, &p);
    expect_close(gpu.makespan_us, reference.makespan_us, "cuda vs reference");
    const auto gpu_finish = lumos::engine::batch_replay(g, b, Backend::kCuda, &p, false);
    expect_close(gpu_finish.makespan_us, reference.makespan_us, "cuda finish times alone");
    EXPECT_GT(gpu.kernel_s, 0.0);
  }
  // Repricing changed the answer: the A100 runs the traced GEMMs by the model, not by peak.
  const auto unpriced = lumos::engine::batch_replay(g, b, Backend::kCpu);
  EXPECT_GT(std::abs(unpriced.makespan_us[0] - cpu.makespan_us[0]), 1.0);
  // On the traced GPU pricing is the identity.
  EXPECT_NEAR(cpu.makespan_us[2], unpriced.makespan_us[2], 1e-6 * unpriced.makespan_us[2]);
}

TEST(EngineDispatch, BackendNamesParseAndUnknownOnesAreBadInput) {
  EXPECT_EQ(lumos::engine::parse_backend("cpu"), Backend::kCpu);
  EXPECT_EQ(lumos::engine::parse_backend("reference"), Backend::kReference);
  EXPECT_STREQ(lumos::engine::to_string(Backend::kCuda), "cuda");
  EXPECT_THROW(lumos::engine::parse_backend("gpu"), lumos::InputError);
  if (!lumos::engine::cuda_built())
    EXPECT_THROW(
        lumos::engine::batch_replay(lumos::graph::Graph{}, lumos::replay::VariantBatch::identity(1),
                                    Backend::kCuda),
        lumos::InputError);
}

}  // namespace
