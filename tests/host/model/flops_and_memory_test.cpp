// FLOPs of the generated iteration against Megatron's formula (calibration.md §4.1), per preset;
// memory against Megatron's accounting (§2.2 bytes per parameter, §4.3 activations).
#include <gtest/gtest.h>

#include <cmath>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "model/flops.hpp"
#include "model/memory_footprint.hpp"

using namespace lumos::model;
using namespace lumos::estimate;

namespace {

EstimateRequest small_layout(const std::string& preset_name) {
  EstimateRequest r;
  r.model = preset(preset_name);
  r.cfg.tp = 8;
  r.cfg.pp = 2;
  r.cfg.dp = 2;
  r.cfg.mbs = 1;
  r.cfg.gbs = 8;  // 4 micro-batches
  return r;
}

}  // namespace

class PresetFlops : public ::testing::TestWithParam<std::string> {};

TEST_P(PresetFlops, GeneratedKernelsAddUpToMegatronsFormulaExactly) {
  const auto run = run_estimate(small_layout(GetParam()), lumos::cost::embedded_db());
  const Estimate& e = run.estimate;
  EXPECT_GT(e.model_flops, 0);
  EXPECT_NEAR(e.graph_model_flops / e.model_flops, 1.0, 1e-12);
  EXPECT_NEAR(e.graph_hw_flops / e.hardware_flops, 1.0, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(AllPresets, PresetFlops,
                         ::testing::Values("gpt3-15b", "gpt3-44b", "gpt3-117b", "gpt3-175b",
                                           "llama3-8b", "llama3-70b", "llama3-405b"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Flops, Gpt3With4hMlpMatchesTheClosedForm72BslhSquared) {
  // calibration.md §4.1: MHA, ffn = 4h, causal: 72 B s L h^2 (1 + s/(12h) + V/(12 L h)).
  const ModelSpec m = preset("gpt3-175b");
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 50304;
  const double closed = 72 * B * s * L * h * h * (1 + s / (12 * h) + V / (12 * L * h));
  EXPECT_NEAR(megatron_model_flops(m, 1536, 50304) / closed, 1.0, 1e-12);
}

TEST(Flops, RecomputationAddsTheForwardItReruns) {
  ParallelConfig c;
  const ModelSpec m = preset("gpt3-15b");
  const double model = megatron_model_flops(m, 64, 50432);
  const double logits = 3 * 64.0 * 2048 * 2 * 6144 * 50432;
  // Full recompute re-runs every layer forward: the layers' share becomes 4/3.
  EXPECT_NEAR(hardware_flops(m, 64, 50432, Recompute::kFull) - model, (model - logits) / 3,
              1e-9 * model);
  for (Recompute r : {Recompute::kFull, Recompute::kSelective}) {
    EstimateRequest q = small_layout("gpt3-15b");
    q.cfg.recompute = r;
    const auto e = run_estimate(q, lumos::cost::embedded_db()).estimate;
    EXPECT_NEAR(e.graph_hw_flops / e.hardware_flops, 1.0, 1e-12) << to_string(r);
    EXPECT_GT(e.hfu, e.mfu);
  }
  // Compiled, torchtitan's full recomputation stops before FC2.
  {
    EstimateRequest q = small_layout("gpt3-15b");
    q.cfg.recompute = Recompute::kFull;
    q.cfg.stack = "torchtitan-compile";
    const auto e = run_estimate(q, lumos::cost::embedded_db()).estimate;
    EXPECT_NEAR(e.graph_hw_flops / e.hardware_flops, 1.0, 1e-12);
  }
  // torchtitan's op-level policy reruns every second matmul, not the attention: of a GPT layer's
  // four (fused QKV, attention projection, FC1, FC2) the attention projection and FC2, of its
  // Llama's seven (wq, wk, wv, wo, w1, w3, w2) wk, wo and w3.
  EstimateRequest q = small_layout("gpt3-15b");
  q.cfg.recompute = Recompute::kSelective;
  q.cfg.stack = "torchtitan";
  const auto e = run_estimate(q, lumos::cost::embedded_db()).estimate;
  EXPECT_NEAR(e.graph_hw_flops / e.hardware_flops, 1.0, 1e-12);
  const double h = m.hidden, f = m.ffn;
  EXPECT_NEAR(e.hardware_flops - e.model_flops,
              static_cast<double>(q.cfg.gbs) * m.seq * m.layers * 2 * (h * h + h * f),
              1e-9 * e.model_flops);
  EstimateRequest ql = small_layout("llama3-8b");
  ql.cfg.recompute = Recompute::kSelective;
  ql.cfg.stack = "torchtitan";
  const auto el = run_estimate(ql, lumos::cost::embedded_db()).estimate;
  EXPECT_NEAR(el.graph_hw_flops / el.hardware_flops, 1.0, 1e-12);
  const ModelSpec l = el.model;
  const double lh = l.hidden, lkv = static_cast<double>(l.kv_size()),
               lq = static_cast<double>(l.q_size()), lf = l.ffn;
  EXPECT_NEAR(
      el.hardware_flops - el.model_flops,
      static_cast<double>(ql.cfg.gbs) * l.seq * l.layers * 2 * (lh * lkv + lq * lh + lh * lf),
      1e-9 * el.model_flops);
}

TEST(Memory, DistributedOptimizerKeepsSixPlusTwelveOverDBytesPerParameter) {
  const ModelSpec m = preset("llama3-70b");
  for (int dp : {1, 2, 8, 64}) {
    for (bool dist : {false, true}) {
      ParallelConfig c;
      c.tp = 8, c.pp = 4, c.dp = dp, c.gbs = 4 * dp;
      c.distributed_optimizer = dist;
      const Layout l = check_layout(m, c);
      for (const StageMemory& s : memory_per_stage(m, c, l)) {
        const double per_param =
            (s.weights_bytes + s.grads_bytes + s.optimizer_bytes) / static_cast<double>(s.params);
        const double expected = dist ? 6 + 12.0 / dp : 18;  // calibration.md §2.2
        EXPECT_NEAR(per_param / expected, 1.0, 0.05) << "dp " << dp << " dist " << dist;
      }
    }
  }
}

TEST(Memory, FirstStageActivationsFollowMegatronsTheoreticalFormula) {
  // calibration.md §4.3 (theoretical_memory_usage.py), sequence parallel + selective recompute:
  // s b h (18 + 4 ffn/h) per layer, L/p layers, p micro-batches in flight on the first stage, plus
  // the embedding's 8 s b p + s b h p, all over t; interleaving multiplies by 1 + (p-1)/(p v).
  const ModelSpec m = preset("gpt3-175b");
  for (int v : {1, 2, 3}) {
    ParallelConfig c;
    c.tp = 8, c.pp = 8, c.dp = 1, c.mbs = 1, c.gbs = 64, c.interleave = v;
    c.sequence_parallel = true;
    c.recompute = Recompute::kSelective;
    const Layout l = check_layout(m, c);
    const double s = 2048, b = 1, h = 12288, p = 8, t = 8, L = 96;
    double expected =
        s * b * h * (18 + 4 * 49152 / h) * (L / p) * p + 8 * s * b * p + s * b * h * p;
    if (v > 1) expected *= 1 + (p - 1) / (p * v);
    expected /= t;
    const auto mem = memory_per_stage(m, c, l);
    EXPECT_NEAR(mem[0].activations_bytes / expected, 1.0, 0.05) << "v " << v;
  }
}

TEST(Memory, FullRecomputeKeepsOnlyEachLayersInput) {
  const ModelSpec m = preset("gpt3-15b");
  ParallelConfig c;
  c.tp = 2, c.pp = 1, c.dp = 1, c.gbs = 1;
  c.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c), 2.0 * 2048 * 6144);
  c.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c), 2048.0 * 6144 * (10 + (8 + 4 * 2.0) / 2));
}

// Korthikanti et al.'s terms for the model's own shapes: grouped-query attention keeps K and V
// of kv_heads x head_dim, a gated MLP keeps its first GEMM's two halves and the activation's
// output (6 ffn/h in place of 4), and a stack without dropout keeps no masks. Llama 3 70B, flash
// attention, sequence parallel: 2 + 2 + 2 x 2 x 1024/8192 + 2 + 2 + 6 x 28672/8192 + 4 (+ 2).
TEST(Memory, ActivationsFollowGroupedQueryAttentionAGatedMlpAndTheStacksDropout) {
  const auto& db = lumos::cost::embedded_db();
  const ModelSpec m = preset("llama3-70b");
  ASSERT_EQ(m.kv_size(), 1024);
  ParallelConfig c;
  c.tp = 8, c.sequence_parallel = true;
  const double sbh = 8192.0 * 8192, per_sbh = 2 + 2 + 4 * 1024.0 / 8192 + 2 + 2 + 6 * 3.5 + 4;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c, &db.stack("megatron-core")), sbh * per_sbh / 8);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c), sbh * (per_sbh + 2) / 8);  // with dropout
  // Without sequence parallelism the norms' and the two GEMM inputs' 8 s b h are on every rank.
  c.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c, &db.stack("megatron-core")),
                   sbh * (8 + (per_sbh - 8) / 8));
}

// Transformer Engine's FP8 modules keep the 1-byte FP8 copy of each GEMM's input: the norms'
// outputs before QKV and FC1 (2 -> 1 each), the SwiGLU output before FC2 (2 -> 1 per inner
// element, 28672/8192 of them), and beside the attention's 16-bit output the projection's FP8
// copy of it (+1 q/h = +1). Llama 3 70B, sequence parallel over 8: 4.5 s b h / 8 fewer bytes.
TEST(Memory, Fp8KeepsOneByteCopiesOfGemmInputs) {
  const auto& stack = lumos::cost::embedded_db().stack("megatron-core");
  const ModelSpec m = preset("llama3-70b");
  ParallelConfig c;
  c.tp = 8, c.sequence_parallel = true;
  const double bf16 = layer_activation_bytes(m, c, &stack);
  c.dtype = lumos::cost::Dtype::kFp8;
  const double fp8 = layer_activation_bytes(m, c, &stack);
  const double sbh = 8192.0 * 8192;
  EXPECT_DOUBLE_EQ(bf16 - fp8, sbh * (1 + 1 + 28672.0 / 8192 - 1) / 8);
  c.recompute = Recompute::kFull;  // the layer's 16-bit input, whatever the GEMMs' precision
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c, &stack), 2 * sbh / 8);
}

// FP8 GEMMs multiply FP8 weights: with 16-bit weights (Megatron-LM's default) Transformer Engine
// keeps each layer GEMM's FP8 copy and its transpose, 2 B more per layer parameter; NeMo's FP8
// recipes keep the weights themselves in FP8 (1 B and a 1 B transpose), no more than bf16's 2 B.
// The embedding and output layer stay bf16 in both.
TEST(Memory, Fp8WeightCopiesAreKeptUnlessTheWeightsAreFp8) {
  const auto& db = lumos::cost::embedded_db();
  const ModelSpec m = preset("llama3-70b");
  ParallelConfig c;
  c.tp = 8, c.pp = 4, c.dp = 2, c.gbs = 8, c.distributed_optimizer = true;
  const Layout l = check_layout(m, c);
  auto weights = [&](const char* stack, lumos::cost::Dtype dt, int stage) {
    c.dtype = dt;
    return memory_per_stage(m, c, l, &db.stack(stack))[static_cast<size_t>(stage)].weights_bytes;
  };
  using lumos::cost::Dtype;
  const ParamCounts pc = parameter_counts(m, l.padded_vocab);
  const double layer_params = static_cast<double>(pc.per_layer * l.layers_on_stage(1, 4) / 8);
  EXPECT_DOUBLE_EQ(
      weights("megatron-core", Dtype::kFp8, 1) - weights("megatron-core", Dtype::kBf16, 1),
      2 * layer_params);
  EXPECT_DOUBLE_EQ(weights("nemo-2024", Dtype::kFp8, 1), weights("nemo-2024", Dtype::kBf16, 1));
  // The first stage's embedding adds no FP8 copy.
  const double first = static_cast<double>(pc.per_layer * l.layers_on_stage(0, 4) / 8);
  EXPECT_DOUBLE_EQ(
      weights("megatron-core", Dtype::kFp8, 0) - weights("megatron-core", Dtype::kBf16, 0),
      2 * first);
}

// Gradients kept in 16 bit (Megatron-Core's grad_reduce_in_fp32 = False) take 2 B per parameter
// in the buffer; the optimizer step's fp32 copies of the shard it updates (4 B x P / d) come once
// the activations are freed, so they add only what outgrows the activations. 16-bit remainders
// of the master weights keep 10 B of optimizer state per parameter in place of 12.
TEST(Memory, SixteenBitGradientsAndRemaindersShrinkTheStaticBytes) {
  const ModelSpec m = preset("llama3-70b");
  ParallelConfig c;
  c.tp = 8, c.pp = 4, c.dp = 2, c.gbs = 8, c.distributed_optimizer = true;
  const Layout l = check_layout(m, c);
  const StageMemory fp32 = memory_per_stage(m, c, l)[1];
  c.grad_reduce_in_fp32 = false;
  c.param_remainders = true;
  const StageMemory half = memory_per_stage(m, c, l)[1];
  const double P = static_cast<double>(half.params);
  ASSERT_GT(half.activations_bytes, 4 * P / 2);  // the copies fit where the activations were
  EXPECT_DOUBLE_EQ(fp32.grads_bytes, 4 * P);
  EXPECT_DOUBLE_EQ(half.grads_bytes, 2 * P);
  EXPECT_DOUBLE_EQ(fp32.optimizer_bytes, 12 * P / 2);
  EXPECT_DOUBLE_EQ(half.optimizer_bytes, 10 * P / 2);
  // Full recomputation of a short sequence leaves less activation memory than the copies: the
  // step's peak is weights, 16-bit gradients, their fp32 copies and the optimizer state.
  ModelSpec short_seq = m;
  short_seq.seq = 256;
  c.recompute = Recompute::kFull, c.distributed_optimizer = false, c.param_remainders = false;
  const Layout ls = check_layout(short_seq, c);
  const StageMemory step = memory_per_stage(short_seq, c, ls)[1];
  ASSERT_LT(step.activations_bytes, 4 * P);
  EXPECT_DOUBLE_EQ(step.grads_bytes + step.activations_bytes, 2 * P + 4 * P);
}

TEST(Memory, FsdpShardsWeightsAndGradientsAndKeepsTwoLayersGathered) {
  const ModelSpec m = preset("llama3-8b");
  ParallelConfig c;
  c.dp = 8, c.gbs = 8, c.fsdp = true;
  const Layout l = check_layout(m, c);
  const StageMemory s = memory_per_stage(m, c, l)[0];
  const double P = static_cast<double>(s.params);
  // The one stage holds the embedding and the output layer, gathered with a layer each.
  const double layer = static_cast<double>(parameter_counts(m, l.padded_vocab).per_layer) +
                       static_cast<double>(l.padded_vocab * m.hidden);
  EXPECT_DOUBLE_EQ(s.weights_bytes, 2 * P / 8 + 2 * 2 * layer);
  EXPECT_DOUBLE_EQ(s.grads_bytes, 4 * P / 8 + 4 * layer);
  EXPECT_DOUBLE_EQ(s.optimizer_bytes, 12 * P / 8);
}
