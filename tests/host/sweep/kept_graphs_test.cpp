// Which graphs a family keeps for its later layouts (sweep/graph_reuse.hpp): a graph whose
// micro-batches are not folded serves only layouts with its micro-batch count, so it does not
// push out a folded graph that layouts of any count folding alike take, and a kept graph serves
// only layouts of its shape.
#include <gtest/gtest.h>

#include <memory>

#include "cost/kernels_db.hpp"
#include "model/model_spec.hpp"
#include "model/param_plan.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/graph_reuse.hpp"

namespace {

using namespace lumos;
using namespace lumos::model;

// Llama 3 70B on 16 stages of 5 chunks (one layer a chunk): graphs of hundreds of thousands of
// nodes, past what a family keeps together.
struct Case {
  ParallelConfig cfg;
  Layout layout;
  std::shared_ptr<const StepCosts> costs;
  std::shared_ptr<const ParamPlan> plan;
};

Case layout_of(const ModelSpec& m, int tp, int cp, int dp, int64_t mbs) {
  const auto& db = cost::embedded_db();
  const cost::GpuSpec& gpu = db.gpu("h100");
  Case l;
  ParallelConfig& c = l.cfg;
  c.tp = tp, c.cp = cp, c.pp = 16, c.dp = dp, c.mbs = mbs, c.gbs = 1024, c.interleave = 5;
  c.recompute = Recompute::kFull;
  c.sequence_parallel = tp > 1;
  c.distributed_optimizer = true;
  l.layout = check_layout(m, c);
  auto costs = std::make_shared<StepCosts>(
      price_step(m, c, l.layout, db, gpu, db.default_topology_for(gpu)));
  l.plan = std::make_shared<const ParamPlan>(param_plan(m, c, l.layout, *costs));
  l.costs = std::move(costs);
  return l;
}

std::shared_ptr<const StepGraph> reuse(sweep::FoldedGraphs& kept, const Case& l) {
  std::shared_ptr<const replay::ReplayProgram> program;
  return kept.reuse(l.cfg, l.layout, *l.costs, *l.plan, &program);
}

void keep(const ModelSpec& m, sweep::FoldedGraphs& kept, const Case& l) {
  auto g = std::make_shared<StepGraph>(
      build_step_graph(m, l.cfg, l.layout, *l.costs, kMaxStepGraphNodes, true));
  kept.keep(l.cfg, l.layout, l.costs, l.plan, std::move(g),
            std::make_shared<const replay::ReplayProgram>());
}

}  // namespace

TEST(KeptGraphs, AnUnfoldedGraphDoesNotPushOutAFoldedOne) {
  const ModelSpec m = preset("llama3-70b");
  sweep::FoldedGraphs kept;
  const Case folded = layout_of(m, 2, 2, 8, 1);    // 128 micro-batches: folded
  const Case unfolded = layout_of(m, 2, 2, 8, 4);  // 32: too few to fold
  keep(m, kept, folded);
  ASSERT_EQ(reuse(kept, folded)->microbatch_folds.size(), 1u);
  keep(m, kept, unfolded);  // the two together are past what a family keeps
  // Another context degree of the same shape, 256 micro-batches: the folded graph, retargeted.
  const std::shared_ptr<const StepGraph> g = reuse(kept, layout_of(m, 2, 4, 4, 1));
  ASSERT_NE(g, nullptr) << "the folded graph was pushed out by the unfolded one";
  EXPECT_EQ(g->microbatch_folds.size(), 1u);
}

TEST(KeptGraphs, AGraphOfAnotherShapeIsNotTaken) {
  const ModelSpec m = preset("llama3-70b");
  sweep::FoldedGraphs kept;
  keep(m, kept, layout_of(m, 2, 2, 8, 1));
  // Another tensor degree gathers parameters in other counts of buckets: another graph.
  EXPECT_EQ(reuse(kept, layout_of(m, 4, 2, 4, 1)), nullptr);
  // No context parallelism: no ring attention, other ops.
  EXPECT_EQ(reuse(kept, layout_of(m, 2, 1, 16, 2)), nullptr);
}
