// Context-parallel attention as Transformer Engine's ring runs it (AttnFuncWithCPAndKVP2P): one
// attention step per KV chunk, each step waiting for the exchange with the ring's neighbours that
// ran beside the step before it; backward exchanges each KV chunk with its gradients.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"

using namespace lumos::model;

namespace {

StepCosts llama70b_cp(int cp, Recompute recompute = Recompute::kNone,
                      const std::string& stack = "nemo-2024") {
  ModelSpec m = preset("llama3-70b");
  m.layers = 4;
  ParallelConfig c;
  c.tp = 4, c.cp = cp, c.pp = 1, c.dp = 1, c.mbs = 1, c.gbs = 2;
  c.sequence_parallel = true, c.stack = stack, c.recompute = recompute;
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

std::vector<const KernelOp*> exchanges(const std::vector<KernelOp>& ops) {
  std::vector<const KernelOp*> out;
  for (const KernelOp& op : ops)
    if (op.group == CommGroup::kCp) out.push_back(&op);
  return out;
}

double sum(const std::vector<const KernelOp*>& ops, int64_t KernelOp::*field) {
  double total = 0;
  for (const KernelOp* op : ops) total += static_cast<double>(op->*field);
  return total;
}

}  // namespace

TEST(ContextParallel, EachStepWaitsForTheChunkTheExchangeBesideThePreviousStepBrought) {
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
      // Forward moves cp - 1 KV chunks; backward also returns each chunk's gradients: one
      // exchange beside every step.
      const auto x = exchanges(*list);
      ASSERT_EQ(x.size(), static_cast<size_t>(fwd ? cp - 1 : cp)) << cp;
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_TRUE(x[i]->side && x[i]->fork);
        // Launched right before step i (beside it); the compute stream first waits for the
        // exchange before it, which brought step i's chunk.
        EXPECT_EQ(x[i] + 1, steps[i]) << cp << " " << i;
        EXPECT_EQ(x[i]->join, i > 0) << cp << " " << i;
      }
      if (fwd) {
        EXPECT_TRUE(steps.back()->join);  // the last chunk has arrived
      } else {
        EXPECT_FALSE(steps.back()->join);  // its exchange (the gradients) runs beside it...
        const KernelOp* after = steps.back() + 1;
        ASSERT_LT(after, list->data() + list->size());
        EXPECT_TRUE(after->join) << after->name;  // ...and what follows the ring waits for it
      }
    }
  }
}

TEST(ContextParallel, BackwardMovesEachChunkWithItsGradientsTwiceTheForwardBytes) {
  for (int cp : {2, 4}) {
    const StepCosts s = llama70b_cp(cp);
    const auto fwd = exchanges(s.layer_fwd), bwd = exchanges(s.layer_bwd);
    // Forward gathers cp - 1 chunks (the all-gather's output side); backward sends each chunk
    // and its gradients (the reduce-scatter's input side): 2 (cp - 1) chunks.
    EXPECT_NEAR(sum(bwd, &KernelOp::nelems), 2 * sum(fwd, &KernelOp::out_nelems), 2.0 * cp);
    // The first exchange carries the KV chunk, the last the gradients alone, the middle ones both.
    for (size_t i = 1; i + 1 < bwd.size(); ++i)
      EXPECT_NEAR(bwd[i]->dur_us, 2 * bwd.front()->dur_us, 1e-6 * bwd[i]->dur_us);
    EXPECT_NEAR(bwd.back()->dur_us, bwd.front()->dur_us, 1e-9);
  }
}

TEST(ContextParallel, RecomputationRerunsTheRingWithItsExchanges) {
  // Selective recomputation reruns Megatron's attention core, which under context parallelism
  // is Transformer Engine's ring, exchanges included.
  const StepCosts sel = llama70b_cp(4, Recompute::kSelective);
  EXPECT_EQ(named(sel.layer_recompute, "flash_fwd_kernel").size(), 4u);
  EXPECT_EQ(exchanges(sel.layer_recompute).size(), 3u);
  // Recomputed kernels run beside the same collectives as in forward, at the same pace.
  for (const StepCosts& s : {sel, llama70b_cp(4, Recompute::kFull)}) {
    const auto again = named(s.layer_recompute, "flash_fwd_kernel");
    const auto first = named(s.layer_fwd, "flash_fwd_kernel");
    ASSERT_EQ(again.size(), first.size());
    for (size_t i = 0; i < again.size(); ++i)
      EXPECT_DOUBLE_EQ(again[i]->dur_us, first[i]->dur_us) << i;
  }
  const StepCosts full = llama70b_cp(4, Recompute::kFull);
  ASSERT_EQ(full.layer_recompute.size(), full.layer_fwd.size());
  for (size_t i = 0; i < full.layer_fwd.size(); ++i)
    EXPECT_DOUBLE_EQ(full.layer_recompute[i].dur_us, full.layer_fwd[i].dur_us)
        << full.layer_fwd[i].name;
}

TEST(ContextParallel, TheStepsAddUpToTheRanksShareOfTheAttention) {
  // cp ranks split the queries evenly, and each rank's steps split its share of the causal
  // attention evenly (the 2 cp chunks of Transformer Engine's load balancing): the FLOPs of the
  // cp steps of one rank add up to 1/cp of the attention without context parallelism.
  auto total = [](const StepCosts& s) {
    double flops = 0;
    for (const KernelOp* op : named(s.layer_fwd, "flash_fwd_kernel")) flops += op->hw_flops;
    return flops;
  };
  const double one = total(llama70b_cp(1));
  ASSERT_GT(one, 0);
  for (int cp : {2, 4}) EXPECT_NEAR(total(llama70b_cp(cp)), one / cp, one * 1e-9) << cp;
}

TEST(ContextParallel, AllGatherRotationGathersOnceAndPassesTheGradientsInFp32) {
  // torchtitan's default (PyTorch's _AllGatherRotater): the whole KV gathered beside the first
  // step, which the second waits for; in backward gathered again, and each step's KV gradients
  // (fp32) sent after it, beside the next step, the last waited for after the loop.
  const int cp = 4;
  const StepCosts s = llama70b_cp(cp, Recompute::kNone, "torchtitan");
  const auto fwd_steps = named(s.layer_fwd, "flash_fwd_kernel");
  const auto fwd_x = exchanges(s.layer_fwd);
  ASSERT_EQ(fwd_steps.size(), static_cast<size_t>(cp));
  ASSERT_EQ(fwd_x.size(), 1u);
  EXPECT_EQ(fwd_x[0]->collective, lumos::cost::Collective::kAllGather);
  EXPECT_TRUE(fwd_x[0]->side && fwd_x[0]->fork && !fwd_x[0]->join);
  EXPECT_EQ(fwd_x[0] + 1, fwd_steps[0]);
  EXPECT_TRUE(fwd_steps[1]->join);
  EXPECT_FALSE(fwd_steps[2]->join || fwd_steps[3]->join);

  const auto bwd_steps = named(s.layer_bwd, "flash_bwd_kernel");
  const auto bwd_x = exchanges(s.layer_bwd);
  ASSERT_EQ(bwd_steps.size(), static_cast<size_t>(cp));
  ASSERT_EQ(bwd_x.size(), static_cast<size_t>(1 + cp));
  EXPECT_EQ(bwd_x[0]->collective, lumos::cost::Collective::kAllGather);
  EXPECT_EQ(bwd_x[0] + 1, bwd_steps[0]);
  // Against the ring's first backward exchange (one 16-bit chunk of the KV): as many elements in
  // fp32, so twice the bytes behind one latency: more time, but not twice.
  const StepCosts ring = llama70b_cp(cp);
  const KernelOp* chunk16 = exchanges(ring.layer_bwd).front();
  for (size_t i = 1; i < bwd_x.size(); ++i) {
    EXPECT_TRUE(bwd_x[i]->side && bwd_x[i]->fork && bwd_x[i]->join) << i;
    EXPECT_NEAR(static_cast<double>(bwd_x[i]->nelems), static_cast<double>(chunk16->nelems), 1)
        << i;
    EXPECT_NE(bwd_x[i]->name.find("_f32"), std::string::npos) << bwd_x[i]->name;
    EXPECT_GT(bwd_x[i]->dur_us, 1.5 * chunk16->dur_us) << i;
    EXPECT_LT(bwd_x[i]->dur_us, 2 * chunk16->dur_us) << i;
    if (i < bwd_x.size() - 1) EXPECT_EQ(bwd_x[i] + 1, bwd_steps[i]) << i;  // beside step i
  }
  const KernelOp* after = bwd_steps.back() + 2;  // past the last gradients' exchange
  ASSERT_LT(after, s.layer_bwd.data() + s.layer_bwd.size());
  EXPECT_TRUE(after->join) << after->name;
}
