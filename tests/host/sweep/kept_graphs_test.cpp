// Which graphs a family keeps for its later layouts (sweep/graph_reuse.hpp, sweep_run.cpp): a
// family runs the layouts that may share a graph one after another, since it keeps only a few
// graphs, and a kept graph serves only layouts of its shape.
#include <gtest/gtest.h>

#include <memory>

#include "cost/kernels_db.hpp"
#include "model/model_spec.hpp"
#include "model/param_plan.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/graph_reuse.hpp"
#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"

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

TEST(KeptGraphs, LayoutsThatMayShareAGraphRunOneAfterAnother) {
  // Tensor degrees 2 and 4, micro-batch sizes 1, 2 and 4: three layouts fold from 112
  // micro-batches (128, 128 and 256 of them); two have 64, unfolded; one 32. Run by tensor,
  // context degree and micro-batch size, a graph of 64 or 32 micro-batches between them pushed
  // the folded graph out and a later one was built again (five graphs). Layouts of other context
  // degrees never share one: each runs its attention in as many steps as the degree.
  sweep::SweepSpec spec;
  spec.model = preset("llama3-70b");
  spec.total_gpus = {512};
  spec.tp = {2, 4};
  spec.cp = {2};
  spec.pp = {16};
  spec.interleave = {5};
  spec.mbs = {1, 2, 4};
  spec.gbs = {1024};
  spec.recompute = {Recompute::kFull};
  sweep::SweepOptions opt;
  opt.backend = engine::Backend::kCpu;
  opt.threads = 1;
  const sweep::SweepResult all = sweep::run_sweep(spec, cost::embedded_db(), opt);
  ASSERT_EQ(all.rows.size(), 6u);
  EXPECT_EQ(all.stats.graphs, 3u);
  // Each row as the layout's own graph gives it.
  for (const sweep::SweepRow& row : all.rows) {
    ASSERT_TRUE(row.feasible) << row.reason;
    sweep::SweepSpec one = spec;
    one.tp = {row.variant.cfg.tp};
    one.mbs = {row.variant.cfg.mbs};
    const sweep::SweepResult alone = sweep::run_sweep(one, cost::embedded_db(), opt);
    ASSERT_EQ(alone.rows.size(), 1u);
    EXPECT_EQ(alone.stats.graphs, 1u);
    EXPECT_EQ(row.step_time_us, alone.rows[0].step_time_us)
        << "tp " << row.variant.cfg.tp << " mbs " << row.variant.cfg.mbs;
  }
}

TEST(KeptGraphs, AGraphOfAnotherShapeIsNotTaken) {
  const ModelSpec m = preset("llama3-70b");
  sweep::FoldedGraphs kept;
  keep(m, kept, layout_of(m, 2, 2, 8, 1));
  // No tensor parallelism: no tensor-parallel collectives, other ops.
  EXPECT_EQ(reuse(kept, layout_of(m, 1, 2, 16, 1)), nullptr);
  // No context parallelism: no ring attention, other ops.
  EXPECT_EQ(reuse(kept, layout_of(m, 2, 1, 16, 2)), nullptr);
}

TEST(KeptGraphs, AnotherTensorDegreeWhoseLayersFillABucketEachTakesTheGraph) {
  // A layer of Llama 3 70B over 2 or 4 GPUs holds more than a bucket's 40 M parameters: one
  // gradient bucket a layer, gathered as such, at either degree.
  const ModelSpec m = preset("llama3-70b");
  sweep::FoldedGraphs kept;
  keep(m, kept, layout_of(m, 2, 2, 8, 1));
  EXPECT_NE(reuse(kept, layout_of(m, 4, 2, 4, 1)), nullptr);
}
