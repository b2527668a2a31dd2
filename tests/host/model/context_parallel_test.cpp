// Context-parallel attention as Transformer Engine's ring runs it: one attention step per KV
// chunk, each step's exchange with the ring's neighbours beside the step before it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"

using namespace lumos::model;

namespace {

StepCosts llama70b_cp(int cp) {
  ModelSpec m = preset("llama3-70b");
  m.layers = 4;
  ParallelConfig c;
  c.tp = 4, c.cp = cp, c.pp = 1, c.dp = 1, c.mbs = 1, c.gbs = 2;
  c.sequence_parallel = true, c.stack = "nemo-2024";
  const auto& db = lumos::cost::embedded_db();
  const auto& g = db.gpu("h100");
  return price_step(m, c, check_layout(m, c), db, g, db.default_topology_for(g));
}

std::vector<const KernelOp*> named(const std::vector<KernelOp>& ops, const std::string& part) {
  std::vector<const KernelOp*> out;
  for (const KernelOp& op : ops)
    if (op.name.find(part) != std::string::npos) out.push_back(&op);
  return out;
}

}  // namespace

TEST(ContextParallel, AttentionRunsOneStepPerChunkWithTheNextExchangeBesideIt) {
  for (int cp : {2, 4}) {
    const StepCosts s = llama70b_cp(cp);
    for (const auto* list : {&s.layer_fwd, &s.layer_bwd}) {
      const bool fwd = list == &s.layer_fwd;
      const auto steps = named(*list, fwd ? "flash_fwd_kernel" : "flash_bwd_kernel");
      ASSERT_EQ(steps.size(), static_cast<size_t>(cp)) << cp;
      // Equal shares; a step beside an exchange gives it the SMs its NCCL kernel holds.
      for (const KernelOp* op : steps) {
        EXPECT_GE(op->dur_us, steps.back()->dur_us - 1e-9);
        EXPECT_LT(op->dur_us, steps.back()->dur_us * 1.2);
      }
      EXPECT_TRUE(steps.back()->join);  // waits for the last chunk's exchange
      std::vector<const KernelOp*> exchanges;
      for (const KernelOp& op : *list)
        if (op.group == CommGroup::kCp) exchanges.push_back(&op);
      ASSERT_EQ(exchanges.size(), static_cast<size_t>(cp - 1)) << cp;
      for (const KernelOp* x : exchanges) EXPECT_TRUE(x->side && x->fork);
    }
  }
}

TEST(ContextParallel, TheStepsAddUpToTheRanksShareOfTheAttention) {
  // cp ranks split the queries evenly: the steps of one rank at cp = 4 add up to half of one
  // rank's attention at cp = 2, in time and in FLOPs.
  auto total = [](const StepCosts& s, double KernelOp::*field) {
    double sum = 0;
    for (const KernelOp* op : named(s.layer_fwd, "flash_fwd_kernel")) sum += op->*field;
    return sum;
  };
  const StepCosts two = llama70b_cp(2), four = llama70b_cp(4);
  EXPECT_NEAR(total(four, &KernelOp::hw_flops), total(two, &KernelOp::hw_flops) / 2, 1);
  EXPECT_GT(total(four, &KernelOp::dur_us), 0);
}
