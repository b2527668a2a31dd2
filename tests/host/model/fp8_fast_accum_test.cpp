// FP8 forward GEMMs with fast accumulation (docs/design.md, "FP8 fast accumulation"): Transformer
// Engine and torchao run a layer's forward GEMMs without promoting partial sums to fp32, its
// gradients' GEMMs with it; the GEMM tables are split-accumulation measurements.
#include <gtest/gtest.h>

#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"
#include "model/step_costs.hpp"

using namespace lumos::model;
using lumos::cost::Dtype;

namespace {

// Llama 3.1 8B on one node, TP 2, so every layer GEMM has a shape of its own.
StepCosts priced(const std::string& gpu, Dtype dt, uint32_t without_terms = 0) {
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu(gpu);
  const ModelSpec m = preset("llama3-8b");
  ParallelConfig c;
  c.tp = 2, c.pp = 1, c.dp = 4, c.mbs = 1, c.gbs = 8, c.dtype = dt;
  c.stack = "nemo-2024";
  StepCostOptions opt;
  opt.without_terms = without_terms;
  return price_step(m, c, check_layout(m, c), db, g, db.default_topology_for(g), opt);
}

const KernelOp& find(const std::vector<KernelOp>& ops, const std::string& what) {
  for (const KernelOp& op : ops)
    if (op.gemm && op.name.find("(" + what + ")") != std::string::npos) return op;
  ADD_FAILURE() << "no GEMM " << what;
  static const KernelOp none;
  return none;
}

const uint32_t kWithoutFastAccum = 1u << static_cast<int>(Term::kFp8FastAccum);

}  // namespace

TEST(Fp8FastAccum, HopperSpeedUpIsSourcedAndBlackwellHasNone) {
  const auto& db = lumos::cost::embedded_db();
  const double hopper =
      lumos::cost::fp8_fprop_speedup(db, db.gpu("h100"), db.fp8_recipes.at("delayed_scaling"));
  EXPECT_GT(hopper, 1.0);
  EXPECT_LE(hopper, 1.2);  // the measured range: 1.1-1.2x
  EXPECT_EQ(
      lumos::cost::fp8_fprop_speedup(db, db.gpu("h200"), db.fp8_recipes.at("current_scaling")),
      hopper);
  EXPECT_EQ(
      lumos::cost::fp8_fprop_speedup(db, db.gpu("b200"), db.fp8_recipes.at("delayed_scaling")),
      1.0);
}

TEST(Fp8FastAccum, ForwardFp8GemmsRunFasterAndGradientGemmsDoNot) {
  const auto& db = lumos::cost::embedded_db();
  const double speedup =
      lumos::cost::fp8_fprop_speedup(db, db.gpu("h100"), db.fp8_recipes.at("delayed_scaling"));
  const StepCosts with = priced("h100", Dtype::kFp8);
  const StepCosts without = priced("h100", Dtype::kFp8, kWithoutFastAccum);
  // Row-parallel GEMMs (attention out, FC2) keep a fixed cost of their userbuffers chunking
  // beside the GEMM's own time: within 1% of the speed-up, which is 10%.
  for (const char* fwd : {"qkv", "attention out", "fc1", "fc2"})
    EXPECT_NEAR(find(with.layer_fwd, fwd).dur_us * speedup, find(without.layer_fwd, fwd).dur_us,
                0.01 * find(without.layer_fwd, fwd).dur_us)
        << fwd;
  for (const char* bwd : {"fc1 data grad", "fc1 weight grad", "qkv data grad", "qkv weight grad"})
    EXPECT_EQ(find(with.layer_bwd, bwd).dur_us, find(without.layer_bwd, bwd).dur_us) << bwd;
  // The logits stay in bf16 (Megatron's output layer is not a Transformer Engine module).
  EXPECT_EQ(find(with.head_fwd, "logits").dur_us, find(without.head_fwd, "logits").dur_us);
}

TEST(Fp8FastAccum, Bf16JobsAndBlackwellJobsAreUnchanged) {
  const StepCosts bf16 = priced("h100", Dtype::kBf16);
  const StepCosts bf16_without = priced("h100", Dtype::kBf16, kWithoutFastAccum);
  EXPECT_EQ(find(bf16.layer_fwd, "fc1").dur_us, find(bf16_without.layer_fwd, "fc1").dur_us);
  const StepCosts b200 = priced("b200", Dtype::kFp8);
  const StepCosts b200_without = priced("b200", Dtype::kFp8, kWithoutFastAccum);
  EXPECT_EQ(find(b200.layer_fwd, "fc1").dur_us, find(b200_without.layer_fwd, "fc1").dur_us);
}

TEST(Fp8FastAccum, ARecipeThatSplitsEveryGemmGainsNothing) {
  lumos::cost::KernelsDb db = lumos::cost::embedded_db();
  const auto& recipe = db.fp8_recipes.at("delayed_scaling");
  EXPECT_GT(lumos::cost::fp8_fprop_speedup(db, db.gpu("h100"), recipe), 1.0);
  db.fp8_recipes.at("delayed_scaling").fprop_fast_accum = false;
  EXPECT_EQ(lumos::cost::fp8_fprop_speedup(db, db.gpu("h100"), recipe), 1.0);
}

TEST(Fp8FastAccum, AGemmBoundByItsWeightsTrafficIsNotSpedUp) {
  // Llama 3.1 405B's layer at 16 tokens: its forward GEMMs read 16384-wide FP8 weights for 16
  // rows, bound by HBM, where the tensor cores' accumulation mode changes nothing.
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  ModelSpec m = preset("llama3-405b");
  m.layers = 1, m.seq = 16;
  ParallelConfig c;
  c.tp = 1, c.pp = 1, c.dp = 1, c.mbs = 1, c.gbs = 1, c.dtype = Dtype::kFp8;
  c.stack = "nemo-2024";
  auto priced_405b = [&](uint32_t without_terms) {
    StepCostOptions opt;
    opt.without_terms = without_terms;
    return price_step(m, c, check_layout(m, c), db, g, db.default_topology_for(g), opt);
  };
  const StepCosts with = priced_405b(0), without = priced_405b(kWithoutFastAccum);
  const KernelOp& qkv = find(with.layer_fwd, "qkv");
  ASSERT_TRUE(qkv.gemm);
  ASSERT_TRUE(lumos::cost::gemm_time(db, g, *qkv.gemm).memory_bound);
  EXPECT_EQ(qkv.dur_us, find(without.layer_fwd, "qkv").dur_us);
}
