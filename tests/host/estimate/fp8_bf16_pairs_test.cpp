// BF16 against FP8 on the same layout: the dgxc-benchmarking rows of published-runs.json (NVIDIA
// DGX Cloud benchmarking recipes, NeMo 24.12, H100) come in pairs that differ in the GEMM
// precision and in what the FP8 runs' script sets with it (bf16 gradients, FP8 reduce-scatter
// buffers). The FP8 recipe's own costs (its casts, scale updates and FP8 gathers, stacks.json
// fp8_recipes) and the FP8 GEMMs' efficiency decide the ratio of the two step times, which the
// stack's fitted constant cancels out of; so the ratio checks the FP8 terms on their own. The
// rows are the ones `lumos bench estimate` prices (estimate/published_runs_2025.cpp), each pair
// with the recipe settings its source names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/constant_fit.hpp"
#include "estimate/estimate.hpp"
#include "estimate/published_runs.hpp"

using namespace lumos::estimate;
using lumos::cost::Dtype;

namespace {

// A BF16 row of NVIDIA/dgxc-benchmarking (published-runs.json, as lumos carries it) and its FP8
// twin: the same id with _fp8_ in place of _bf16_.
struct Pair {
  const PublishedRun* bf16;
  const PublishedRun* fp8;
};

const std::vector<Pair>& pairs() {
  static const std::vector<Pair> p = [] {
    std::vector<Pair> out;
    for (const PublishedRun& b : published_runs()) {
      const auto at = b.id.find("_bf16_");
      if (b.id.rfind("dgxc_", 0) != 0 || at == std::string::npos) continue;
      const std::string twin = b.id.substr(0, at) + "_fp8_" + b.id.substr(at + 6);
      for (const PublishedRun& f : published_runs())
        if (f.id == twin) out.push_back({&b, &f});
    }
    return out;
  }();
  return p;
}

double step_s(const PublishedRun& r) {
  return run_estimate(r.request, lumos::cost::embedded_db()).estimate.step_time_us / 1e6;
}

}  // namespace

// The goal is every pair within 5%; the model reaches it on seven of the eight, with no pair
// beyond 10%. Llama 3.1 405B's is the farthest (+6.4%; its FP8 run gains more over BF16 than
// lumos prices at either model's small scale, 70B's pair being -2.1% there). Before the replica
// skew at amax reductions, Llama 3.1 70B's on 2,048 GPUs was the farthest (-6.3%) and 405B's
// +4.0%. The mean bound guards the 2.3% of 2026-12-06 (2.5% without the replica skew, 3.0%
// before fast accumulation).
TEST(Fp8Bf16Pairs, StepRatioOfDgxcPairsStaysNearThePublishedOne) {
  std::printf("  %-34s %8s %8s %8s %8s %10s %8s %7s\n", "pair", "bf16 pub", "lumos", "fp8 pub",
              "lumos", "ratio pub", "lumos", "off");
  int within = 0;
  double sum_abs = 0;
  ASSERT_EQ(pairs().size(), 8u);
  for (const Pair& p : pairs()) {
    ASSERT_EQ(p.bf16->request.cfg.dtype, Dtype::kBf16);
    ASSERT_EQ(p.fp8->request.cfg.dtype, Dtype::kFp8);
    const double b = step_s(*p.bf16), f = step_s(*p.fp8);
    const double pub = p.fp8->step_time_s / p.bf16->step_time_s, ours = f / b;
    const double off_pct = 100 * (ours / pub - 1);
    std::printf("  %-34s %7.3fs %7.3fs %7.3fs %7.3fs %10.3f %8.3f %+6.1f%%\n", p.bf16->id.c_str(),
                p.bf16->step_time_s, b, p.fp8->step_time_s, f, pub, ours, off_pct);
    EXPECT_LT(std::abs(off_pct), 10.0) << p.bf16->id;
    within += std::abs(off_pct) < 5.0;
    sum_abs += std::abs(off_pct);
  }
  const double mean = sum_abs / static_cast<double>(pairs().size());
  std::printf("  %d of %zu pairs within 5%%, mean |off| %.1f%%\n", within, pairs().size(), mean);
  EXPECT_LT(mean, 2.7);
  EXPECT_GE(within, 7);
}

// Two pairs ran at a small and a large data-parallel degree, pipelined and interleaved (Llama
// 3.1 70B on 64 and 2,048 GPUs, Nemotron-4 340B on 128 and 2,048): there the published FP8 step
// grows with scale more than its BF16 twin's, by 3.4% and 5.2% of the ratio. Delayed scaling's
// amax all-reduce, one per model chunk and pass across the stage's replicas, waits for the last
// replica; BF16 runs nothing like it. stacks.json's replica_skew_us is fitted (least squares) to
// these two growths: one value must account for both, and without it the model's ratio does not
// grow at all.
TEST(Fp8Bf16Pairs, RatioGrowsWithDataParallelScaleAsPublishedThroughReplicaSkew) {
  const auto skewless = without_replica_skew(lumos::cost::embedded_db());
  ASSERT_GT(lumos::cost::embedded_db().fp8_recipes.at("delayed_scaling").replica_skew_us, 0);
  auto ratio = [](const Pair& p, const lumos::cost::KernelsDb& db) {
    return run_estimate(p.fp8->request, db).estimate.step_time_us /
           run_estimate(p.bf16->request, db).estimate.step_time_us;
  };
  int checked = 0;
  for (size_t small = 0; small < pairs().size(); ++small)
    for (size_t large = 0; large < pairs().size(); ++large) {
      const Pair &a = pairs()[small], &b = pairs()[large];
      const auto& ca = a.fp8->request.cfg;
      const auto& cb = b.fp8->request.cfg;
      if (a.fp8->request.model.layers != b.fp8->request.model.layers || ca.dp >= cb.dp ||
          ca.pp == 1)
        continue;
      const double published = 100 * ((b.fp8->step_time_s / b.bf16->step_time_s) /
                                          (a.fp8->step_time_s / a.bf16->step_time_s) -
                                      1);
      const auto& db = lumos::cost::embedded_db();
      const double with_skew = 100 * (ratio(b, db) / ratio(a, db) - 1);
      const double without = 100 * (ratio(b, skewless) / ratio(a, skewless) - 1);
      std::printf(
          "  %s, DP %d -> %d: FP8/BF16 ratio grows %+.2f%% (published), %+.2f%% (lumos), "
          "%+.2f%% (no skew)\n",
          a.fp8->id.c_str(), ca.dp, cb.dp, published, with_skew, without);
      EXPECT_NEAR(with_skew, published, 0.75) << a.fp8->id;
      EXPECT_GT(with_skew - without, 2.0) << a.fp8->id;
      ++checked;
    }
  EXPECT_EQ(checked, 2);
}

TEST(Fp8Bf16Pairs, DelayedScalingCastsLessThanCurrentScaling) {
  // The same FP8 job under the two recipes: current scaling's separate amax pass and unfused
  // casts (6 B per element) cost more than delayed scaling's casts fused into the norms and
  // activations, so the current-scaling stack's step is longer, and by less than the casts'
  // whole share of an FP8 step.
  const Pair& p = pairs()[5];
  ASSERT_EQ(p.fp8->request.cfg.stack, "nemo-2024");
  const auto& db = lumos::cost::embedded_db();
  const auto& cur = db.stack("nemo-2025").fp8;
  const auto& del = db.stack("nemo-2024").fp8;
  EXPECT_GT(cur.input_cast_bytes, del.input_cast_bytes);
  EXPECT_GT(cur.fused_input_cast_bytes, del.fused_input_cast_bytes);
  EXPECT_TRUE(del.gather_fp8);
  const double delayed = step_s(*p.fp8);
  const double bf16 = step_s(*p.bf16);
  EXPECT_LT(delayed, bf16 * 0.8);  // FP8 GEMMs run near 1.8x BF16 on these large shapes
}
