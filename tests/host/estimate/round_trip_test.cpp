// `lumos generate` then `lumos replay`: the per-stage Kineto traces of a model-driven iteration
// read back as a multi-rank job and replay to the estimate's step time (within 0.1%; in practice
// to the nanosecond rounding of the files).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/generated_trace.hpp"
#include "graph/multi_rank.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "support/test_util.hpp"
#include "trace/classified_kernels.hpp"
#include "trace/kineto_loader.hpp"

using namespace lumos::model;
using namespace lumos::estimate;
using lumos::testing::TempDir;

namespace {

struct Case {
  const char* name;
  const char* model;
  int tp, cp, pp, dp, v;
  int64_t gbs;
  bool sp, dist;
  Recompute rc;
  lumos::cost::Dtype dtype;
  int64_t layers;  // 0 keeps the preset's
  bool fsdp = false;
  const char* stack = "";  // "" = the default stack
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

}  // namespace

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, GeneratedTracesReplayToTheEstimatesStepTime) {
  const Case& k = GetParam();
  EstimateRequest r;
  r.model = preset(k.model);
  if (k.layers) r.model.layers = k.layers;
  r.cfg.tp = k.tp, r.cfg.cp = k.cp, r.cfg.pp = k.pp, r.cfg.dp = k.dp, r.cfg.interleave = k.v;
  r.cfg.gbs = k.gbs;
  r.cfg.sequence_parallel = k.sp;
  r.cfg.distributed_optimizer = k.dist;
  r.cfg.fsdp = k.fsdp;
  r.cfg.recompute = k.rc;
  r.cfg.dtype = k.dtype;
  r.cfg.stack = k.stack;
  const EstimateRun run = run_estimate(r, lumos::cost::embedded_db());
  TempDir tmp;
  const auto files = write_stage_traces(run.step, run.replay, tmp.path(), run.estimate.gpu);
  ASSERT_EQ(files.size(), static_cast<size_t>(k.pp));
  const auto multi = lumos::graph::load_multi_rank(tmp.path());
  for (double s : multi.clock_shift_us) EXPECT_EQ(s, 0.0);
  const auto rep = lumos::replay::reference_replay(multi.graph);
  double step = 0;
  for (const auto& s : lumos::replay::step_times(multi.graph, rep)) {
    step = std::max(step, s.replayed_us);
    EXPECT_LE(std::fabs(s.error_pct), 0.1) << "rank " << s.rank;
  }
  EXPECT_NEAR(step / run.estimate.step_time_us, 1.0, 1e-3);
  // Each pipeline message met its peer again: one rendezvous per send/receive pair.
  size_t p2p = 0;
  for (const auto& c : run.step.comms) p2p += c.collective == "send";
  size_t met = 0;
  for (const auto& c : multi.collectives) met += c.name.find("SendRecv") != std::string::npos;
  EXPECT_EQ(met, p2p);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, RoundTrip,
    ::testing::Values(Case{"default_1f1b", "gpt3-15b", 2, 1, 2, 4, 1, 16, false, false,
                           Recompute::kNone, lumos::cost::Dtype::kBf16, 8},
                      Case{"equal_nccl_counts_per_stage", "gpt3-15b", 1, 1, 2, 1, 1, 8, false,
                           false, Recompute::kFull, lumos::cost::Dtype::kBf16, 4},
                      Case{"interleaved_cp_sp_distopt_fp8", "llama3-8b", 2, 2, 4, 2, 2, 16, true,
                           true, Recompute::kSelective, lumos::cost::Dtype::kFp8, 16},
                      Case{"no_pipeline", "llama3-8b", 4, 1, 1, 2, 1, 4, true, false,
                           Recompute::kNone, lumos::cost::Dtype::kBf16, 4},
                      // Unfused attention, blocking sends, gradient accumulation, the tied
                      // embedding all-reduce between the first and last of four stages.
                      Case{"megatron_2021_stack", "gpt3-15b", 2, 1, 4, 2, 1, 16, false, false,
                           Recompute::kSelective, lumos::cost::Dtype::kFp16, 8, false,
                           "megatron-2021"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RoundTripClocks, StagesWithOffsetClocksAlignThroughTheirPipelineNeighbours) {
  EstimateRequest r;
  r.model = preset("gpt3-15b");
  r.model.layers = 8;
  r.cfg.tp = 2, r.cfg.pp = 4, r.cfg.dp = 2, r.cfg.gbs = 16;
  const EstimateRun run = run_estimate(r, lumos::cost::embedded_db());
  TempDir tmp;
  const auto files = write_stage_traces(run.step, run.replay, tmp.path(), run.estimate.gpu);
  std::vector<lumos::trace::EventTable> tables;
  for (const auto& f : files) tables.push_back(lumos::trace::load_trace(f));
  for (size_t s : {2u, 3u})  // stages 2 and 3 recorded on a clock 5 ms ahead
    for (auto& e : tables[s].events) e.ts_ns += 5'000'000;
  const auto multi = lumos::graph::build_multi_rank(std::move(tables));
  EXPECT_EQ(multi.clock_shift_us[1], 0.0);
  EXPECT_EQ(multi.clock_shift_us[2], -5000.0);
  EXPECT_EQ(multi.clock_shift_us[3], -5000.0);
  const auto rep = lumos::replay::reference_replay(multi.graph);
  double step = 0;
  for (const auto& s : lumos::replay::step_times(multi.graph, rep))
    step = std::max(step, s.replayed_us);
  EXPECT_NEAR(step / run.estimate.step_time_us, 1.0, 1e-6);
}

// Written FP8 traces say which GEMMs are forward ones as Transformer Engine's hybrid format
// does: a gradient's GEMM reads its output gradient in E5M2, so the trace read back tells every
// forward GEMM (fast accumulation) from every gradient's (split) by its operand types.
TEST(RoundTripFp8, ForwardAndGradientGemmsReadBackByTheirOperandTypes) {
  EstimateRequest r;
  r.model = preset("llama3-8b");
  r.model.layers = 2;
  r.cfg.tp = 2, r.cfg.pp = 1, r.cfg.dp = 1, r.cfg.gbs = 2;
  r.cfg.sequence_parallel = true;
  r.cfg.dtype = lumos::cost::Dtype::kFp8;
  const EstimateRun run = run_estimate(r, lumos::cost::embedded_db());
  TempDir tmp;
  const auto files = write_stage_traces(run.step, run.replay, tmp.path(), run.estimate.gpu);
  ASSERT_EQ(files.size(), 1u);
  const auto t = lumos::trace::load_trace(files[0]);
  const auto rep = lumos::trace::cost_report(lumos::cost::embedded_db(), t);
  size_t forward = 0, gradient = 0;
  for (const auto& k : rep.kernels) {
    if (!k.gemm || k.gemm->dtype != lumos::cost::Dtype::kFp8) continue;
    const std::string name(t.name_of(t.events[k.event]));
    const bool grad = name.find("grad") != std::string::npos;
    EXPECT_EQ(k.gemm->fprop, !grad) << name;
    (grad ? gradient : forward) += 1;
  }
  EXPECT_GT(forward, 0u);
  EXPECT_EQ(gradient, 2 * forward);  // a data and a weight gradient per forward GEMM
}
