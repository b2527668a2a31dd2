// Shape edits reprice the traced graph in place (docs/design.md "Trace-driven what-ifs"): on
// generated jobs made to differ from the model by one rule applied alike at both configurations
// (modified_jobs.hpp), `--hidden`, `--seq`, `--mbs` (the micro-batch count kept), `--ffn` and
// `--heads` x2 of configuration A agree with the replay of the job written at configuration B
// within 3%, and an edit to the traced values changes nothing (0.01%). The model rebuild's error is
// printed beside it; where the rule is a gap the model has no place for, the rebuild must miss by
// more.
//
// Measured when this test was written (error against B: reprice / model rebuild):
//   cpu x30     pp1 hidden x2 +0.01% / -0.00%    pp2 seq x2 +0.00% / -2.37%
//               pp2 mbs x2 +0.00% / -2.37%       pp2 heads x2 +0.00% / -2.39%
//               tp2 pp2 seq x8 -0.01% / -9.30%
//   python gap  pp2 hidden x2 -0.00% / -8.94%    pp1 seq x2 +0.01% / -4.99%
//               pp2 mbs x2 +0.01% / -9.12%       pp1 ffn x2 +0.00% / -3.44%
//               tp2 pp2 hidden x2 +0.01% / -7.44%
// A CPU-bound job hides a small edit (tp 2 at seq x2 replays as traced), hence seq x8 there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "estimate/trace_graph_edit.hpp"
#include "estimate/trace_structural.hpp"
#include "host/estimate/modified_jobs.hpp"

using lumos::estimate::first_step_us;
using lumos::estimate::StructuralEdit;
using lumos::testing::modified_job;
using lumos::testing::Rule;
using lumos::testing::small_job;

namespace {

struct ShapeCase {
  const char* name;
  int pp;
  Rule rule;
  int64_t hidden = 0, seq = 0, mbs = 0;  // 0: as traced
  bool rule_is_a_gap = false;            // the Python gap, which the rebuild loses
  int64_t ffn = 0, heads = 0;
  int tp = 1;
};

void PrintTo(const ShapeCase& c, std::ostream* os) {
  *os << c.name;
}

// The small job at configuration B: the head dimension follows the width, the global batch the
// micro-batch size (the micro-batch count kept).
lumos::estimate::EstimateRequest config_b(const ShapeCase& k) {
  lumos::estimate::EstimateRequest r = small_job(k.pp, 4, 1, 1, k.tp);
  if (k.heads) r.model.heads = r.model.kv_heads = k.heads;
  if (k.hidden || k.heads)
    r.model.hidden = k.hidden ? k.hidden : r.model.hidden,
    r.model.head_dim = r.model.hidden / r.model.heads;
  if (k.ffn) r.model.ffn = k.ffn;
  if (k.seq) r.model.seq = k.seq;
  if (k.mbs) r.cfg.gbs = r.cfg.gbs / r.cfg.mbs * k.mbs, r.cfg.mbs = k.mbs;
  return r;
}

StructuralEdit edit_of(const ShapeCase& k, const lumos::estimate::EstimateRequest& b) {
  StructuralEdit e;
  if (k.hidden) e.hidden = k.hidden;
  if (k.heads) e.heads = k.heads;
  if (k.ffn) e.ffn = k.ffn;
  if (k.seq) e.seq = k.seq;
  if (k.mbs) e.mbs = k.mbs, e.gbs = b.cfg.gbs;
  return e;
}

lumos::estimate::StructuralAnswer edit(const lumos::graph::LoadedInput& a, StructuralEdit e) {
  lumos::estimate::StructuralRequest req;
  req.model = lumos::testing::small_model();
  req.edit = e;
  return lumos::estimate::run_structural_whatif(a, req, lumos::cost::embedded_db());
}

}  // namespace

class TracedShapeEdit : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(TracedShapeEdit, TheRepriceOfAAgreesWithB) {
  const ShapeCase& k = GetParam();
  lumos::testing::TempDir tmp;
  const auto a = modified_job(small_job(k.pp, 4, 1, 1, k.tp), k.rule, tmp.file("a"));
  const auto rb = config_b(k);
  const auto b = modified_job(rb, k.rule, tmp.file("b"));
  const double truth = first_step_us(b.graph);
  const auto ans = edit(a, edit_of(k, rb));
  const double err = (ans.predicted_us / truth - 1) * 100;
  std::printf(
      "%-24s A %10.1f us  B %10.1f us  reprice %10.1f us (%+.2f%%)  model rebuild %10.1f us "
      "(%+.2f%%)\n",
      k.name, ans.trace_replay_us, truth, ans.predicted_us, err, ans.rebuild_us,
      (ans.rebuild_us / truth - 1) * 100);
  EXPECT_EQ(ans.path.rfind("traced-graph reprice (", 0), 0u) << ans.path;
  EXPECT_NE(ans.path.find(" 0 kept)"), std::string::npos) << ans.path;
  EXPECT_NEAR(ans.predicted_us, truth, 0.03 * truth);
  if (k.rule_is_a_gap) EXPECT_GT(std::abs(ans.rebuild_us / truth - 1) * 100, std::abs(err));
}

INSTANTIATE_TEST_SUITE_P(
    ModifiedGeneratedJobs, TracedShapeEdit,
    ::testing::Values(
        ShapeCase{"cpu_x30_pp1_hidden_x2", 1, lumos::testing::slow_cpu, 2048},
        ShapeCase{"python_gap_pp2_hidden_x2", 2, lumos::testing::python_gap, 2048, 0, 0, true},
        ShapeCase{"cpu_x30_pp2_seq_x2", 2, lumos::testing::slow_cpu, 0, 2048},
        ShapeCase{"python_gap_pp1_seq_x2", 1, lumos::testing::python_gap, 0, 2048, 0, true},
        ShapeCase{"cpu_x30_pp2_mbs_x2", 2, lumos::testing::slow_cpu, 0, 0, 2},
        ShapeCase{"python_gap_pp2_mbs_x2", 2, lumos::testing::python_gap, 0, 0, 2, true}),
    [](const auto& info) { return std::string(info.param.name); });

// The MLP, the head count, and a tensor-parallel job (its collectives repriced at the new
// activation size, their waits for the untraced peer kept).
INSTANTIATE_TEST_SUITE_P(
    OtherShapes, TracedShapeEdit,
    ::testing::Values(
        ShapeCase{"python_gap_pp1_ffn_x2", 1, lumos::testing::python_gap, 0, 0, 0, true, 7168},
        ShapeCase{"cpu_x30_pp2_heads_x2", 2, lumos::testing::slow_cpu, 0, 0, 0, false, 0, 16},
        ShapeCase{"python_gap_tp2_pp2_hidden_x2", 2, lumos::testing::python_gap, 2048, 0, 0, true,
                  0, 0, 2},
        ShapeCase{"cpu_x30_tp2_pp2_seq_x8", 2, lumos::testing::slow_cpu, 0, 8192, 0, false, 0, 0,
                  2}),
    [](const auto& info) { return std::string(info.param.name); });

// The traced values given as edits: every kernel repriced by a ratio of one.
TEST(TracedShapeEdit, AnEditToTheTracedShapesChangesNothing) {
  lumos::testing::TempDir tmp;
  const auto a = modified_job(small_job(2, 4), lumos::testing::python_gap, tmp.file("a"));
  StructuralEdit e;
  e.hidden = 1024, e.seq = 1024;
  const auto ans = edit(a, e);
  EXPECT_EQ(ans.path.rfind("traced-graph reprice (", 0), 0u) << ans.path;
  EXPECT_NEAR(ans.predicted_us, ans.trace_replay_us, 1e-4 * ans.trace_replay_us);
}

// A tensor degree or a micro-batch count that changes is the model's rebuild, which says why.
TEST(TracedShapeEdit, ALayoutChangeFallsBackToTheRebuildWithItsReason) {
  lumos::testing::TempDir tmp;
  const auto a = modified_job(small_job(1, 4), lumos::testing::slow_cpu, tmp.file("a"));
  StructuralEdit mbs;
  mbs.mbs = 2;  // the global batch kept: half the micro-batches
  const auto m = edit(a, mbs);
  EXPECT_NE(m.path.find("model rebuild (the micro-batch count changes"), std::string::npos)
      << m.path;
  StructuralEdit tp;
  tp.tp = 2;  // twice the GPUs: ranks and collectives the trace does not have
  const auto t = edit(a, tp);
  EXPECT_NE(t.path.find("model rebuild (the layout changes"), std::string::npos) << t.path;
}
