// The parameter counts that size a step graph's buckets, gathers and optimizer steps
// (model/param_plan.hpp): a graph built for one layout, priced with another layout's plan of the
// same shape, has the slots that layout's own graph has, with its counts; a layout whose buckets
// close elsewhere has another shape.
#include <gtest/gtest.h>

#include "cost/kernels_db.hpp"
#include "model/param_plan.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"

namespace {

using namespace lumos::model;

struct Built {
  ParallelConfig cfg;
  Layout layout;
  StepCosts costs;
  ParamPlan plan;
  StepGraph graph;
};

// Micro-batches 16 per pipeline whatever the degrees, so that the graphs' folds are alike.
Built build(int tp, int dp, bool fsdp = false, bool distributed_optimizer = false) {
  const auto& db = lumos::cost::embedded_db();
  static const lumos::cost::Topology topo = db.default_topology_for(db.gpu("h100"));
  ModelSpec m = preset("gpt3-15b");
  m.layers = 8;
  Built b;
  b.cfg.tp = tp;
  b.cfg.pp = 2;
  b.cfg.dp = dp;
  b.cfg.gbs = 16 * dp;
  b.cfg.sequence_parallel = true;
  b.cfg.fsdp = fsdp;
  b.cfg.distributed_optimizer = distributed_optimizer;
  b.layout = check_layout(m, b.cfg);
  b.costs = price_step(m, b.cfg, b.layout, db, db.gpu("h100"), topo);
  b.plan = param_plan(m, b.cfg, b.layout, b.costs);
  b.graph = build_step_graph(m, b.cfg, b.layout, b.costs, kMaxStepGraphNodes, true);
  return b;
}

void expect_priced_as_own(const Built& a, const Built& b) {
  ASSERT_TRUE(same_structure(a.costs, b.costs));
  ASSERT_TRUE(same_param_shape(a.plan, b.plan));
  const std::vector<double> params = slot_params(a.graph, b.plan);
  ASSERT_EQ(a.graph.slots.size(), b.graph.slots.size());
  ASSERT_EQ(params.size(), b.graph.slots.size());
  for (size_t s = 0; s < params.size(); ++s) {
    EXPECT_EQ(a.graph.slots[s].source, b.graph.slots[s].source) << s;
    EXPECT_EQ(params[s], b.graph.slots[s].params) << s;  // the same count, to the bit
  }
  EXPECT_EQ(model_slot_durations(a.graph, b.costs, kUnitSpeeds, &params),
            model_slot_durations(b.graph, b.costs));
}

}  // namespace

TEST(ParamPlan, AGraphPricedWithAnotherLayoutsPlanHasThatLayoutsCounts) {
  const Built a = build(2, 4), b = build(4, 2);
  // The counts differ (else the test shows nothing): layers are split over 2 and 4 GPUs.
  EXPECT_NE(a.plan.layer, b.plan.layer);
  expect_priced_as_own(a, b);
  expect_priced_as_own(b, a);
}

TEST(ParamPlan, TheDistributedOptimizersShardsArePricedAsTheOtherLayoutsOwn) {
  const Built a = build(2, 2, false, true), b = build(2, 8, false, true);
  EXPECT_TRUE(a.plan.gathers);
  expect_priced_as_own(a, b);
  expect_priced_as_own(b, a);
}

TEST(ParamPlan, FsdpSharesArePricedAsTheOtherLayoutsOwn) {
  const Built a = build(2, 4, true), b = build(4, 8, true);
  EXPECT_TRUE(a.plan.fsdp);
  expect_priced_as_own(a, b);
}

TEST(ParamPlan, BucketsThatCloseElsewhereAreAnotherShape) {
  // A layer of this model on 8 GPUs holds fewer parameters than a bucket: two layers fill one.
  const Built a = build(2, 4), b = build(8, 4);
  EXPECT_LT(b.plan.layer, b.costs.bucket_params);
  EXPECT_GT(a.plan.layer, a.costs.bucket_params);
  EXPECT_FALSE(same_param_shape(a.plan, b.plan));
}

TEST(ParamPlan, WithoutDataParallelPeersNothingIsReducedOrGathered) {
  const Built a = build(2, 1);
  EXPECT_FALSE(a.plan.reduces);
  EXPECT_FALSE(a.plan.gathers);
  EXPECT_FALSE(same_param_shape(a.plan, build(2, 2).plan));
}

TEST(ParamPlan, GatheredBucketsAreTheGradientBucketsInForwardOrder) {
  // Megatron gathers the updated parameters in the buckets their gradients were reduced in: per
  // chunk, the gradient buckets reversed, each ending where its last layer (or the head) does.
  for (const int tp : {2, 8}) {
    const Built a = build(tp, 4, false, true);
    const ParamPlan& p = a.plan;
    ASSERT_TRUE(p.gathers);
    const size_t chunks = p.grad_first.size() - 1;
    for (size_t j = 0; j < chunks; ++j) {
      const std::vector<double> grads(p.value.begin() + p.grad_first[j],
                                      p.value.begin() + p.grad_first[j + 1]);
      const std::vector<double> gathers(p.value.begin() + p.gather_first[j],
                                        p.value.begin() + p.gather_first[j + 1]);
      ASSERT_EQ(gathers.size(), grads.size()) << "tp " << tp << " chunk " << j;
      double sum = 0;
      for (size_t b = 0; b < gathers.size(); ++b) {
        EXPECT_EQ(gathers[b], grads[grads.size() - 1 - b]) << "tp " << tp << " chunk " << j;
        sum += gathers[b];
        // The bucket's end is a layer's end (or the chunk's), within rounding of the sum.
        const double end = p.gather_end[p.gather_first[j] - p.gather_first[0] + b];
        EXPECT_NEAR(end, sum, 1e-9 * sum) << "tp " << tp << " chunk " << j << " bucket " << b;
      }
    }
  }
}

TEST(ParamPlan, AnotherTensorDegreeWhoseLayersFillABucketEachIsPricedAsItsOwn) {
  // With the distributed optimizer, a layer over 2 or 4 GPUs fills a bucket of its own at either
  // degree: one shape, each layout's counts.
  const Built a = build(2, 4, false, true), b = build(4, 2, false, true);
  EXPECT_GT(b.plan.layer, b.costs.bucket_params);
  expect_priced_as_own(a, b);
  expect_priced_as_own(b, a);
}
