// Delayed scaling's amax all-reduce: one small all-reduce per model chunk and pass over every
// tensor, context and data-parallel rank of a pipeline stage (docs/design.md, "FP8 recipes").
#include <gtest/gtest.h>

#include <algorithm>

#include "cost/collective_model.hpp"
#include "cost/kernels_db.hpp"
#include "model/fp8_amax_reduction.hpp"
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

KernelOp share(const std::string& recipe, const ParallelConfig& c, int64_t layers) {
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  return fp8_amax_reduction_share(db, g, db.default_topology_for(g), db.fp8_recipes.at(recipe), c,
                                  layers, false);
}

int count(const std::vector<KernelOp>& ops, const std::string& part) {
  return static_cast<int>(std::count_if(ops.begin(), ops.end(), [&](const KernelOp& op) {
    return op.name.find(part) != std::string::npos;
  }));
}

}  // namespace

TEST(Fp8AmaxReduction, ALayersSharesAddUpToOneSmallAllReduceOverTheStagesRanks) {
  const ParallelConfig c = llama70b(64, lumos::cost::Dtype::kFp8);
  const KernelOp op = share("delayed_scaling", c, 80);  // 4 layers per chunk
  EXPECT_EQ(op.group_size, 4 * 2 * 64);
  // Priced here from NCCL's model directly: 4 layers x 4 GEMMs x 2 amaxes x 4 B over 512 ranks.
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  lumos::cost::CollectiveQuery q;
  q.bytes = 4 * 4 * 2 * 4, q.ranks = 512, q.ranks_per_node = 8;
  const double whole_us =
      lumos::cost::collective_time(db, g, db.default_topology_for(g), q).time_us;
  EXPECT_GT(whole_us, 20.0);  // a latency-bound all-reduce across nodes, not free
  EXPECT_NEAR(op.dur_us * 4, whole_us, 1e-9);
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
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  const ModelSpec m = preset("llama3-70b");
  auto priced = [&](lumos::cost::Dtype dt, uint32_t without) {
    const ParallelConfig c = llama70b(64, dt);
    StepCostOptions opt;
    opt.without_terms = without;
    return price_step(m, c, check_layout(m, c), db, g, db.default_topology_for(g), opt);
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
