// BF16 against FP8 on the same layout: the dgxc-benchmarking rows of published-runs.json (NVIDIA
// DGX Cloud benchmarking recipes, NeMo 24.12, H100) come in pairs that differ only in the GEMM
// precision. The FP8 recipe's own costs (its casts, scale updates and FP8 gathers, stacks.json
// fp8_recipes) and the FP8 GEMMs' efficiency decide the ratio of the two step times, which the
// stack's fitted constant cancels out of; so the ratio checks the FP8 terms on their own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"

using namespace lumos::estimate;
using lumos::cost::Dtype;

namespace {

struct Pair {
  const char* id;  // published-runs.json ids, without the _bf16/_fp8 part
  const char* base;
  int64_t layers, hidden, ffn, heads, kv_heads, vocab, seq;
  int tp, cp, pp, dp, v;
  int64_t mbs, gbs;
  double bf16_s, fp8_s;  // published iteration times
};

// NVIDIA/dgxc-benchmarking v25.02.01 README tables, as published-runs.json records them.
const std::vector<Pair>& pairs() {
  static const std::vector<Pair> p = {
      {"llama31_8b 8gpu", "llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, 1, 2, 1, 4, 1, 1, 128,
       12.78, 9.44},
      {"llama31_8b 128gpu", "llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, 1, 2, 1, 64, 1, 1,
       2048, 13.16, 9.73},
      {"llama31_70b 64gpu", "llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, 4, 2, 4, 2, 5, 1,
       128, 14.61, 10.46},
      {"llama31_70b 2048gpu", "llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, 4, 2, 4, 64, 5, 1,
       4096, 14.84, 10.99},
      {"llama31_405b 576gpu", "llama3-405b", 126, 16384, 53248, 128, 8, 128256, 8192, 8, 2, 9, 4, 7,
       1, 252, 17.5, 11.0},
      // Nemotron-4: squared-ReLU MLP (not gated), GQA, LayerNorm: a GPT-style model resized.
      {"nemotron4_15b 16gpu", "gpt3-15b", 32, 6144, 24576, 48, 8, 256000, 4096, 4, 1, 1, 4, 1, 4,
       64, 2.812, 2.039},
      {"nemotron4_340b 128gpu", "gpt3-15b", 96, 18432, 73728, 96, 8, 256000, 4096, 8, 1, 8, 2, 12,
       1, 32, 4.61, 3.16},
      {"nemotron4_340b 2048gpu", "gpt3-15b", 96, 18432, 73728, 96, 8, 256000, 4096, 8, 1, 8, 32, 12,
       1, 512, 4.84, 3.49},
  };
  return p;
}

double step_s(const Pair& p, Dtype dt) {
  EstimateRequest q;
  q.model = lumos::model::preset(p.base);
  q.model.layers = p.layers, q.model.hidden = p.hidden, q.model.ffn = p.ffn;
  q.model.heads = p.heads, q.model.kv_heads = p.kv_heads, q.model.vocab = p.vocab;
  q.model.seq = p.seq, q.model.head_dim = p.hidden / p.heads;
  q.gpu = "h100";
  auto& c = q.cfg;
  c.tp = p.tp, c.cp = p.cp, c.pp = p.pp, c.dp = p.dp, c.interleave = p.v;
  c.mbs = p.mbs, c.gbs = p.gbs;
  // NeMo 24.12's recipes: sequence parallel with TP, distributed optimizer, no recomputation.
  c.sequence_parallel = p.tp > 1;
  c.distributed_optimizer = true;
  c.dtype = dt;
  c.stack = "nemo-2024";
  return run_estimate(q, lumos::cost::embedded_db()).estimate.step_time_us / 1e6;
}

}  // namespace

// The goal is every pair within 5%; the model reaches it on seven of the eight and holds the mean
// there, and no pair beyond 10% (Llama 3.1 405B's pair is the farthest: its published FP8 speed-up,
// 1.59x, is above every other pair's 1.35-1.46x).
TEST(Fp8Bf16Pairs, StepRatioOfDgxcPairsStaysNearThePublishedOne) {
  std::printf("  %-24s %8s %8s %8s %8s %10s %8s %7s\n", "pair", "bf16 pub", "lumos", "fp8 pub",
              "lumos", "ratio pub", "lumos", "off");
  int within = 0;
  double sum_abs = 0;
  for (const Pair& p : pairs()) {
    const double b = step_s(p, Dtype::kBf16), f = step_s(p, Dtype::kFp8);
    const double pub = p.fp8_s / p.bf16_s, ours = f / b;
    const double off_pct = 100 * (ours / pub - 1);
    std::printf("  %-24s %7.3fs %7.3fs %7.3fs %7.3fs %10.3f %8.3f %+6.1f%%\n", p.id, p.bf16_s, b,
                p.fp8_s, f, pub, ours, off_pct);
    EXPECT_LT(std::abs(off_pct), 10.0) << p.id;
    within += std::abs(off_pct) < 5.0;
    sum_abs += std::abs(off_pct);
  }
  const double mean = sum_abs / static_cast<double>(pairs().size());
  std::printf("  %d of %zu pairs within 5%%, mean |off| %.1f%%\n", within, pairs().size(), mean);
  EXPECT_LT(mean, 3.0);
  EXPECT_GE(within, 7);
}

TEST(Fp8Bf16Pairs, DelayedScalingCastsLessThanCurrentScaling) {
  // The same FP8 job under the two recipes: current scaling's separate amax pass and unfused
  // casts (6 B per element) cost more than delayed scaling's casts fused into the norms and
  // activations, so the current-scaling stack's step is longer, and by less than the casts'
  // whole share of an FP8 step.
  const Pair& p = pairs()[5];
  const auto& db = lumos::cost::embedded_db();
  const auto& cur = db.stack("nemo-2025").fp8;
  const auto& del = db.stack("nemo-2024").fp8;
  EXPECT_GT(cur.input_cast_bytes, del.input_cast_bytes);
  EXPECT_GT(cur.fused_input_cast_bytes, del.fused_input_cast_bytes);
  EXPECT_TRUE(del.gather_fp8);
  const double delayed = step_s(p, Dtype::kFp8);
  const double bf16 = step_s(p, Dtype::kBf16);
  EXPECT_LT(delayed, bf16 * 0.8);  // FP8 GEMMs run near 1.8x BF16 on these large shapes
}
