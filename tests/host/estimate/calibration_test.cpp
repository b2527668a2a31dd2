// The calibration check: lumos's step time against every published run it carries (the DGX-H100
// rows of calibration.md §1.2 and the rows of published-runs.json), printed as a table, held to
// the accuracy goal below; and the per-layer kernel model against the one
// layer-level A100 measurement the references give (Korthikanti et al. 2022, Table 4).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "cost/kernels_db.hpp"
#include "estimate/calibration_check.hpp"
#include "estimate/estimate.hpp"
#include "estimate/published_runs.hpp"

using namespace lumos::model;
using namespace lumos::estimate;

namespace {

// The accuracy goal in sample, on every published run (calibration.md's DGX-H100 rows and
// published-runs.json): mean |error| <= 4%, signed mean within 2.5% per GPU type over its tier-A
// rows where a fitted constant prices them (what the fitted constants zero), within 5% where none
// does (the 500 W H100's two torchtitan rows, whose stack has no fitted constant: +4.0% since
// torchtitan's wq, wk, wv and w1, w3 run as matmuls of their own). Every row within
// 10%, except the rows the shared NeMo
// factor cannot serve at once: fitted on 21 H100 rows, the five Megatron-Bridge FP8 rows (current
// scaling) are up to 13% too slow while NeMo 24.12's delayed-scaling rows are within 9%; and the
// llm-foundry rows, whose fixed per-step costs are not yet terms of their own (MPT-1B 11% too
// slow). Those are held to 15%. Cross-validation (cross_validation_test.cpp) is the honest number.
constexpr double kMeanAbsPct = 4, kRowPct = 10, kSignedPct = 2.5, kUnfittedSignedPct = 5,
                 kNewRowPct = 15;
bool loose_row(const PublishedRun& p) {
  return p.request.cfg.stack == "nemo-2025" || p.id.rfind("mpt_", 0) == 0;
}

}  // namespace

TEST(Calibration, StepTimesHoldAgainstPublishedRunsAndMatchTheStoredResiduals) {
  const auto& db = lumos::cost::embedded_db();
  const auto rows = calibration_rows(db);
  ASSERT_EQ(rows.size(), 48u);  // calibration.md's 5 DGX-H100 rows, all 43 of published-runs.json
  // Estimates' ranges come from kernels_db/calibration.json: it must say what the model does now.
  ASSERT_EQ(db.residuals.size(), rows.size()) << "regenerate: scripts/update-residuals.sh";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& stored = db.residuals[i];
    EXPECT_EQ(stored.label, rows[i].run->label);
    EXPECT_EQ(stored.stack, rows[i].run->request.cfg.stack);
    EXPECT_NEAR(stored.error_pct, rows[i].error_pct, 0.01)
        << rows[i].run->label << ": regenerate with scripts/update-residuals.sh";
  }
  std::printf("%-34s %-5s %-14s %10s %10s %8s\n", "run", "gpu", "stack", "published", "lumos",
              "error");
  for (const CalibrationRow& r : rows) {
    std::printf("%-34s %-5s %-14s %9.3fs %9.3fs %+7.1f%%\n", r.run->label.c_str(),
                r.run->request.gpu.c_str(), r.run->request.cfg.stack.c_str(), r.published_step_s,
                r.step_time_s, r.error_pct);
    EXPECT_GT(r.step_time_s, 0) << r.run->label;
  }
  std::map<std::string, std::pair<double, int>> signed_by_gpu;
  std::map<std::string, bool> fitted_gpu;  // a tier-A row of it runs under a fitted constant
  double abs_sum = 0;
  for (const CalibrationRow& r : rows) {
    EXPECT_LE(std::fabs(r.error_pct), loose_row(*r.run) ? kNewRowPct : kRowPct) << r.run->label;
    abs_sum += std::fabs(r.error_pct);
    if (r.run->tier != "A") continue;
    signed_by_gpu[r.run->request.gpu].first += r.error_pct;
    signed_by_gpu[r.run->request.gpu].second++;
    fitted_gpu[r.run->request.gpu] |= db.stack(r.run->request.cfg.stack).kernel_time_factor != 1;
  }
  std::printf("all %zu runs: mean |error| %.1f%%\n", rows.size(), abs_sum / rows.size());
  EXPECT_LE(abs_sum / rows.size(), kMeanAbsPct);
  for (const auto& [gpu, sum_n] : signed_by_gpu) {
    const double mean = sum_n.first / sum_n.second;
    std::printf("%s: %d tier-A runs, signed mean %+.1f%%\n", gpu.c_str(), sum_n.second, mean);
    EXPECT_LE(std::fabs(mean), fitted_gpu[gpu] ? kSignedPct : kUnfittedSignedPct) << gpu;
  }
  for (const CalibrationGroup& g : calibration_groups(rows))
    std::printf("%s / %s: %d runs, mean |error| %.1f%%, signed mean %+.1f%%, max %.1f%%\n",
                g.gpu.c_str(), g.stack.c_str(), g.rows, g.mean_abs_error_pct,
                g.signed_mean_error_pct, g.max_abs_error_pct);
}

// NVIDIA ran Nemotron-4 340B at TP 8 x PP 8 x interleave 12 on 128 H100s (80 GB) in both
// precisions: the estimate must not call the layout too big. Its recipe keeps gradients in bf16
// and, in bf16, the master weights as 16-bit remainders (published_runs_2025.cpp); with fp32
// gradients and full fp32 master weights the same layout does not fit (the ablation).
TEST(Calibration, Nemotron4Of340BFitsWhereNvidiaRanIt) {
  const auto& db = lumos::cost::embedded_db();
  int rows = 0;
  for (const auto& p : published_runs()) {
    if (p.id.find("nemotron4_340b") == std::string::npos) continue;
    ++rows;
    const Estimate e = run_estimate(p.request, db).estimate;
    EXPECT_TRUE(e.fits) << p.label;
    EstimateRequest fp32 = p.request;
    fp32.cfg.grad_reduce_in_fp32 = true;
    fp32.cfg.param_remainders = false;
    if (p.request.cfg.gpus() == 128) EXPECT_FALSE(run_estimate(fp32, db).estimate.fits) << p.label;
  }
  EXPECT_EQ(rows, 4);
}

TEST(Calibration, DgxH100RunsHaveAPlausibleMfu) {
  for (const auto& p : published_runs()) {
    if (p.model_tflops_per_gpu <= 0) continue;
    const auto e = run_estimate(p.request, lumos::cost::embedded_db()).estimate;
    EXPECT_GT(e.mfu, 0.2) << p.label;
    EXPECT_LT(e.mfu, 0.6) << p.label;
  }
}

// Korthikanti et al. 2022 (arXiv 2205.05198) Table 4: one layer of their 22B model (h 6144,
// 64 heads, seq 2048, micro-batch 4, TP 8) on A100s, Megatron-LM: forward + backward 19.6 ms
// without recomputation, 27.2 ms with full recomputation. The megatron-2021 stack runs every
// kernel and tensor-parallel collective of a layer on one stream, so their durations add up.
TEST(Calibration, MegatronLayerOnA100MatchesKorthikantiTable4) {
  const auto& db = lumos::cost::embedded_db();
  ModelSpec m = preset("gpt3-175b");
  m.layers = 48, m.hidden = 6144, m.ffn = 4 * 6144, m.heads = m.kv_heads = 64;
  m.head_dim = 96, m.vocab = 51200, m.seq = 2048;
  ParallelConfig c;
  c.tp = 8, c.mbs = 4, c.gbs = 4, c.dtype = lumos::cost::Dtype::kFp16;
  c.stack = "megatron-2021";
  const auto& gpu = db.gpu("a100");
  auto layer_ms = [&](Recompute rc) {
    c.recompute = rc;
    const Layout l = check_layout(m, c);
    const StepCosts k = price_step(m, c, l, db, gpu, db.default_topology_for(gpu));
    double us = 0;
    for (const auto* ops : {&k.layer_fwd, &k.layer_bwd, &k.layer_recompute})
      for (const KernelOp& op : *ops) us += op.dur_us;
    return us / 1000;
  };
  const double none = layer_ms(Recompute::kNone), full = layer_ms(Recompute::kFull);
  std::printf("22B layer on A100, TP 8: %.1f ms (published 19.6), full recompute %.1f ms (27.2)\n",
              none, full);
  EXPECT_NEAR(none, 19.6, 0.1 * 19.6);
  EXPECT_NEAR(full, 27.2, 0.1 * 27.2);
}
