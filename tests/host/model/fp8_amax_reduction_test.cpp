// Delayed scaling's amax all-reduce: one small all-reduce per model chunk and pass over every
// tensor, context and data-parallel rank of a pipeline stage (docs/design.md, "FP8 recipes").
#include <gtest/gtest.h>

#include <algorithm>

#include "cost/collective_model.hpp"
#include "cost/kernels_db.hpp"
#include "cost/memory_model.hpp"
#include "model/fp8_amax_reduction.hpp"
#include "model/slowest_gpu.hpp"
#include "model/step_costs.hpp"

using namespace lumos::model;

namespace {

// Llama 3.1 70B as dgxc-benchmarking lays it out: TP 4, CP 2, PP 4 x 5 virtual stages.
ParallelConfig llama70b(int dp, lumos::cost::Dtype dt) {
  ParallelConfig c;
  c.tp = 4, c.cp = 2, c.pp = 4, c.dp = dp, c.interleave = 5;
  c.mbs = 1, c.gbs = 64 * dp, c.dtype = dt, c.sequence_parallel = true;
  c.distributed_optimizer = true, c.stack = "nemo-2024";
  return c;
}

KernelOp share(const std::string& recipe, const ParallelConfig& c, int64_t layers,
               bool with_replica_skew = true) {
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  return fp8_amax_reduction_share(db, g, db.default_topology_for(g), db.fp8_recipes.at(recipe), c,
                                  layers, false, with_replica_skew);
}

// One GPU's step of Llama 3 70B on the H100 in layout c, priced as lumos estimate prices it.
StepCosts priced_70b(const ParallelConfig& c, const StepCostOptions& opt = {}) {
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  const ModelSpec m = preset("llama3-70b");
  return price_step(m, c, check_layout(m, c), db, g, db.default_topology_for(g), opt);
}

int count(const std::vector<KernelOp>& ops, const std::string& part) {
  return static_cast<int>(std::count_if(ops.begin(), ops.end(), [&](const KernelOp& op) {
    return op.name.find(part) != std::string::npos;
  }));
}

}  // namespace

TEST(Fp8AmaxReduction, ALayersSharesAddUpToOneSmallAllReduceOverTheStagesRanks) {
  const ParallelConfig c = llama70b(64, lumos::cost::Dtype::kFp8);
  const KernelOp op = share("delayed_scaling", c, 80);  // 4 layers per chunk, 20 per stage
  EXPECT_EQ(op.group_size, 4 * 2 * 64);
  // Priced here from NCCL's model directly: every FP8 module of the stage's 20 layers, of all
  // five chunks, 4 GEMMs x 3 forward amaxes x 4 B, over 512 ranks.
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  lumos::cost::CollectiveQuery q;
  q.bytes = 20 * 4 * 3 * 4, q.ranks = 512, q.ranks_per_node = 8;
  const double whole_us =
      lumos::cost::collective_time(db, g, db.default_topology_for(g), q).time_us;
  EXPECT_GT(whole_us, 20.0);  // a latency-bound all-reduce across nodes, not free
  // It ends when the last of the 64 replicas has reached it.
  const double skew_us =
      db.fp8_recipes.at("delayed_scaling").replica_skew_us * expected_max_of_normals(64);
  EXPECT_NEAR(op.dur_us * 4, whole_us + skew_us, 1e-9);
  EXPECT_NEAR(share("delayed_scaling", c, 80, false).dur_us * 4, whole_us, 1e-9);
}

TEST(Fp8AmaxReduction, WaitsForTheLastDataParallelReplicaOnly) {
  const auto& recipe = lumos::cost::embedded_db().fp8_recipes.at("delayed_scaling");
  ASSERT_GT(recipe.replica_skew_us, 0);
  auto wait_us = [](int dp) {
    const ParallelConfig c = llama70b(dp, lumos::cost::Dtype::kFp8);
    return (share("delayed_scaling", c, 80).dur_us -
            share("delayed_scaling", c, 80, false).dur_us) *
           4;
  };
  // One replica waits for no other; the wait grows as the expected maximum of the replicas'
  // arrivals does: slowly, 0.56 deviations for 2, 2.33 for 64, 3.29 for 2,048.
  EXPECT_NEAR(wait_us(1), 0.0, 1e-12);
  EXPECT_NEAR(wait_us(2), recipe.replica_skew_us * 0.5642, 0.01 * recipe.replica_skew_us);
  EXPECT_NEAR(wait_us(64), recipe.replica_skew_us * 2.3352, 0.01 * recipe.replica_skew_us);
  EXPECT_GT(wait_us(2048), wait_us(64));
  EXPECT_LT(wait_us(2048), 1.5 * wait_us(64));
  // Current scaling reduces no amaxes across replicas: nothing waits.
  EXPECT_EQ(lumos::cost::embedded_db().fp8_recipes.at("current_scaling").replica_skew_us, 0);
  EXPECT_EQ(share("current_scaling", llama70b(64, lumos::cost::Dtype::kFp8), 80).dur_us, 0);
}

TEST(Fp8AmaxReduction, GrowsWithTheDataParallelDegree) {
  const double small = share("delayed_scaling", llama70b(2, lumos::cost::Dtype::kFp8), 80).dur_us;
  const double large = share("delayed_scaling", llama70b(64, lumos::cost::Dtype::kFp8), 80).dur_us;
  EXPECT_GT(small, 0.0);
  EXPECT_GT(large, 1.5 * small);  // 2 nodes' tree against 64 nodes'
}

TEST(Fp8AmaxReduction, CurrentScalingAndSingleRankStagesReduceNothing) {
  EXPECT_EQ(share("current_scaling", llama70b(64, lumos::cost::Dtype::kFp8), 80).dur_us, 0.0);
  ParallelConfig one = llama70b(1, lumos::cost::Dtype::kFp8);
  one.tp = one.cp = 1;
  EXPECT_EQ(share("delayed_scaling", one, 80).dur_us, 0.0);
}

TEST(Fp8AmaxReduction, RunsOncePerLayerAndPassInFp8OnlyAndTheTermTakesItOut) {
  auto priced = [](lumos::cost::Dtype dt, uint32_t without) {
    StepCostOptions opt;
    opt.without_terms = without;
    return priced_70b(llama70b(64, dt), opt);
  };
  const StepCosts fp8 = priced(lumos::cost::Dtype::kFp8, 0);
  EXPECT_EQ(count(fp8.layer_fwd, "(fp8 amax)"), 1);
  EXPECT_EQ(count(fp8.layer_bwd, "(fp8 amax)"), 1);
  EXPECT_EQ(count(priced(lumos::cost::Dtype::kBf16, 0).layer_fwd, "(fp8 amax)"), 0);
  const StepCosts without =
      priced(lumos::cost::Dtype::kFp8, 1u << static_cast<int>(Term::kFp8AmaxReduction));
  EXPECT_EQ(count(without.layer_fwd, "(fp8 amax)"), 0);
  EXPECT_EQ(count(without.layer_bwd, "(fp8 amax)"), 0);
}

TEST(Fp8AmaxReduction, ScalesAreUpdatedOncePerReductionNotPerModule) {
  // Transformer Engine updates every module's history and scales in one kernel after the
  // reduction (and concatenates the amaxes in one before it): 2 kernels per chunk and pass,
  // which each of a chunk's 4 layers carries a quarter of, whatever its modules.
  auto priced = [](int interleave) {
    ParallelConfig c = llama70b(64, lumos::cost::Dtype::kFp8);
    c.interleave = interleave;
    return priced_70b(c);
  };
  auto update_us = [](const std::vector<KernelOp>& ops) {
    double us = 0;
    int n = 0;
    for (const KernelOp& op : ops)
      if (op.name.find("amax_and_scale_update") != std::string::npos) us += op.dur_us, ++n;
    EXPECT_EQ(n, 1);
    return us;
  };
  const StepCosts four = priced(5), twenty = priced(1);  // 4 and 20 layers per chunk
  // One small kernel as the stack prices it: the launch floor, times its fitted factor.
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  const double kernel_us = lumos::cost::membound_time_us(db, g, "elementwise", 4096) *
                           db.stack("nemo-2024").kernel_time_factor;
  EXPECT_NEAR(update_us(four.layer_fwd), 2 * kernel_us / 4, 1e-9);
  EXPECT_NEAR(update_us(four.layer_bwd), 2 * kernel_us / 4, 1e-9);
  EXPECT_NEAR(update_us(twenty.layer_fwd), 2 * kernel_us / 20, 1e-9);
}

TEST(Fp8AmaxReduction, FullRecomputationRerunsLayersWithoutReducingOrUpdating) {
  // Transformer Engine 1.x's checkpoint reruns each checkpointed layer from backward outside any
  // fp8_autocast, on the forward's stashed scales: no autocast exits, so the recomputed layer
  // reduces no amaxes and updates no scales. Forward and backward keep theirs.
  auto priced = [](Recompute r) {
    ParallelConfig c = llama70b(64, lumos::cost::Dtype::kFp8);
    c.recompute = r;
    return priced_70b(c);
  };
  const StepCosts full = priced(Recompute::kFull), none = priced(Recompute::kNone);
  ASSERT_FALSE(full.layer_recompute.empty());
  EXPECT_EQ(count(full.layer_recompute, "(fp8 amax)"), 0);
  EXPECT_EQ(count(full.layer_recompute, "amax_and_scale_update"), 0);
  EXPECT_EQ(count(full.layer_recompute, "fc2"), count(none.layer_fwd, "fc2"));
  EXPECT_EQ(full.layer_recompute.size() + 2, none.layer_fwd.size());
  EXPECT_EQ(count(full.layer_fwd, "(fp8 amax)"), 1);
  EXPECT_EQ(count(full.layer_bwd, "(fp8 amax)"), 1);
  EXPECT_EQ(count(full.layer_fwd, "amax_and_scale_update"), 1);
}

TEST(Fp8AmaxReduction, TpOnlyReductionSpansTensorAndContextRanksWithoutTheReplicas) {
  // Megatron-Core's tp_only_amax_red: the group is the stage's tensor x context-parallel ranks,
  // so the all-reduce stays within the 8 ranks of TP 4 x CP 2 and waits for no other replica.
  ParallelConfig c = llama70b(64, lumos::cost::Dtype::kFp8);
  c.tp_only_amax_reduction = true;
  EXPECT_EQ(amax_reduction_ranks(c), 8);
  EXPECT_EQ(amax_reduction_replicas(c), 1);
  const KernelOp tp_only = share("delayed_scaling", c, 80);
  EXPECT_EQ(tp_only.group_size, 8);
  // Generated traces file it under the tensor-parallel group (context-parallel at TP 1), not the
  // data-parallel one a what-if of the data-parallel degree reprices.
  EXPECT_EQ(tp_only.group, CommGroup::kTp);
  ParallelConfig cp_only = c;
  cp_only.tp = 1;
  EXPECT_EQ(share("delayed_scaling", cp_only, 80).group, CommGroup::kCp);
  EXPECT_EQ(share("delayed_scaling", llama70b(64, lumos::cost::Dtype::kFp8), 80).group,
            CommGroup::kDp);
  EXPECT_NEAR(tp_only.dur_us, share("delayed_scaling", c, 80, false).dur_us, 1e-12);
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  lumos::cost::CollectiveQuery q;
  q.bytes = 20 * 4 * 3 * 4, q.ranks = 8, q.ranks_per_node = 8;
  EXPECT_NEAR(tp_only.dur_us * 4,
              lumos::cost::collective_time(db, g, db.default_topology_for(g), q).time_us, 1e-9);
  // Against the default group over all 512 ranks of the stage, skew included.
  const KernelOp all = share("delayed_scaling", llama70b(64, lumos::cost::Dtype::kFp8), 80);
  EXPECT_EQ(all.group_size, 512);
  EXPECT_GT(all.dur_us, 5 * tp_only.dur_us);
}
