// A traced GEMM moved to another GPU (whatif::gemm_pricing): an FP8 forward GEMM, both operands
// E4M3, ran with the traced architecture's fast accumulation and runs with the new one's
// (docs/design.md, "FP8 fast accumulation"); a gradient's GEMM, one operand E5M2, accumulates
// split on both. Written traces say which is which, as Transformer Engine's and torchao's do.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"
#include "graph/graph_builder.hpp"
#include "replay/batch_update.hpp"
#include "trace/classified_kernels.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/kineto_writer.hpp"
#include "whatif/gemm_pricing.hpp"

namespace {

using lumos::cost::Dtype;
using lumos::trace::ArgValue;

// One compute-bound GEMM shape three times on an H100: FP8 forward (E4M3 x E4M3), FP8 data
// gradient (E5M2 x E4M3), and torchao's aten::_scaled_mm forward.
lumos::trace::EventTable three_fp8_gemms() {
  lumos::trace::KinetoWriter w;
  w.set_device_name("NVIDIA H100 80GB HBM3");
  const std::vector<std::vector<int64_t>> dims{{8192, 8192}, {8192, 8192}};
  struct Op {
    const char* op;
    const char* a;
    const char* kernel;
  };
  const Op ops[] = {
      {"aten::mm", "c10::Float8_e4m3fn", "sm90_xmma_gemm_e4m3bf16_bf16f32 (forward)"},
      {"aten::mm", "c10::Float8_e5m2", "sm90_xmma_gemm_e4m3bf16_bf16f32 (data grad)"},
      {"aten::_scaled_mm", "c10::Float8_e4m3fn", "sm90_xmma_gemm_e4m3bf16_bf16f32 (scaled)"}};
  double ts = 0;
  for (const Op& o : ops) {
    w.cpu_op(1, o.op, ts, 10,
             {{"Input Dims", dims},
              {"Input type", std::vector<std::string>{o.a, "c10::Float8_e4m3fn"}}});
    w.launch(1, "cudaLaunchKernel", ts + 1, 5, "kernel", o.kernel, 0, 7, ts + 20, 1000);
    ts += 1100;
  }
  const std::string json = w.json();
  return lumos::trace::parse_trace_bytes(json.data(), json.size(), "three_fp8_gemms");
}

}  // namespace

TEST(TracedGemms, AnFp8GemmWithAnE5m2OperandIsAGradientsGemm) {
  const auto& db = lumos::cost::embedded_db();
  const auto t = three_fp8_gemms();
  const auto rep = lumos::trace::cost_report(db, t);
  std::vector<bool> fprop;
  for (const auto& k : rep.kernels)
    if (k.gemm) {
      EXPECT_EQ(k.gemm->dtype, Dtype::kFp8);
      EXPECT_EQ(k.gemm->m, 8192);
      fprop.push_back(k.gemm->fprop);
    }
  EXPECT_EQ(fprop, (std::vector<bool>{true, false, true}));
}

TEST(GemmPricing, AnFp8ForwardGemmLeavesHoppersFastAccumulationBehind) {
  const auto& db = lumos::cost::embedded_db();
  const auto t = three_fp8_gemms();
  const auto g = lumos::graph::build_graph(t).graph;
  const std::vector<std::string> gpus{"h100", "h200", "b200", "a100"};
  const auto p = lumos::whatif::gemm_pricing(g, t, db, "h100", gpus);
  ASSERT_EQ(p.fast_accum.size(), p.keys());
  const auto view = p.view();
  // Each GEMM node's factor per variant column, in trace order.
  std::vector<std::vector<double>> factor;
  for (lumos::graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (p.node_key[v] < 0) continue;
    factor.emplace_back();
    for (uint16_t gi : p.variant_gpu)
      factor.back().push_back(lumos::replay::gemm_key_factor(view, p.node_key[v], gi));
  }
  ASSERT_EQ(factor.size(), 3u);
  const double hopper = lumos::cost::fp8_fast_accum_speedup(db, db.gpu("h100"));
  ASSERT_GT(hopper, 1.0);
  EXPECT_DOUBLE_EQ(lumos::cost::fp8_fast_accum_speedup(db, db.gpu("b200")), 1.0);
  // On the traced GPU every factor is 1; an H200 is Hopper too, so forward and gradient GEMMs
  // move alike; a B200 (one accumulation mode) and an A100 (no FP8: bf16) lose Hopper's gain
  // on the forward GEMMs only.
  for (const auto& f : factor) EXPECT_NEAR(f[0], 1.0, 1e-12);
  EXPECT_NEAR(factor[0][1], factor[1][1], 1e-12 * factor[1][1]);
  EXPECT_NEAR(factor[0][2], factor[1][2] * hopper, 1e-12 * factor[0][2]);
  EXPECT_NEAR(factor[0][3], factor[1][3] * hopper, 1e-12 * factor[0][3]);
  EXPECT_EQ(factor[2], factor[0]);  // _scaled_mm: the same forward GEMM
  // The B200's forward GEMM: its model time over the H100's fast-accumulated one.
  const lumos::cost::GemmQuery q{8192, 8192, 8192, 1, Dtype::kFp8};
  const auto core = [&](const char* gpu) {
    const auto params = lumos::cost::gemm_core_params(db, db.gpu(gpu), Dtype::kFp8);
    return lumos::cost::gemm_core_time(params, q.m, q.n, q.k, q.batch).time_us;
  };
  EXPECT_NEAR(factor[0][2], core("b200") / (core("h100") / hopper), 1e-12 * factor[0][2]);
}

TEST(GemmPricing, FastAccumulationTablesThatDisagreeAreRefused) {
  const auto& db = lumos::cost::embedded_db();
  const auto t = three_fp8_gemms();
  const auto g = lumos::graph::build_graph(t).graph;
  auto p = lumos::whatif::gemm_pricing(g, t, db, "h100", {"b200"});
  EXPECT_NO_THROW(p.validate(g.num_nodes(), 1));
  auto slow = p;
  slow.fast_accum_speedup[1] = 0.5;
  EXPECT_THROW(slow.validate(g.num_nodes(), 1), lumos::InputError);
  auto short_keys = p;
  short_keys.fast_accum.pop_back();
  EXPECT_THROW(short_keys.validate(g.num_nodes(), 1), lumos::InputError);
}
