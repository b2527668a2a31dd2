// `lumos estimate --explain`: each named term of the step taken out in turn.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/term_effects.hpp"

using namespace lumos::estimate;

namespace {

EstimateRequest nemotron_15b(lumos::cost::Dtype dt) {
  EstimateRequest q;
  q.model = lumos::model::preset("gpt3-15b");
  q.model.layers = 4;  // a short model: the terms scale with layers, the test need not
  q.model.kv_heads = 8;
  q.gpu = "h100";
  auto& c = q.cfg;
  c.tp = 4, c.pp = 1, c.dp = 2, c.mbs = 2, c.gbs = 8;
  c.sequence_parallel = true;
  c.distributed_optimizer = true;
  c.dtype = dt;
  c.stack = "nemo-2024";
  return q;
}

const TermEffect& find(const std::vector<TermEffect>& v, const std::string& name) {
  for (const auto& t : v)
    if (t.term == name) return t;
  ADD_FAILURE() << "no term " << name;
  return v.front();
}

}  // namespace

TEST(TermEffects, Fp8JobListsItsRecipeTermsWithWhatEachAdds) {
  const auto& db = lumos::cost::embedded_db();
  const auto q = nemotron_15b(lumos::cost::Dtype::kFp8);
  const double step = run_estimate(q, db).estimate.step_time_us;
  const auto terms = term_effects(q, db, step);
  ASSERT_EQ(terms.size(), static_cast<size_t>(lumos::model::kNumTerms));
  for (const auto& t : terms) EXPECT_FALSE(t.source.empty()) << t.term;
  // Casts and scale updates are kernels of their own: taking them out shortens the step.
  EXPECT_TRUE(find(terms, "fp8 operand casts").applies);
  EXPECT_GT(find(terms, "fp8 operand casts").added_us, 0);
  EXPECT_GT(find(terms, "fp8 amax/scale updates").added_us, 0);
  // FP8 gathers move half the bytes, userbuffers hide collectives: both save time.
  EXPECT_LT(find(terms, "fp8 all-gathers").added_us, 0);
  EXPECT_LT(find(terms, "tp userbuffers").added_us, 0);
  // NeMo's FP8 weights: the distributed optimizer gathers 1 B per parameter, never more time.
  EXPECT_TRUE(find(terms, "fp8 param gathers").applies);
  EXPECT_LE(find(terms, "fp8 param gathers").added_us, 0);
  // The fitted factor scales the kernels' time: what it adds is at most (factor - 1) of the step.
  const auto& f = find(terms, "stack kernel_time_factor");
  const double factor = db.stack("nemo-2024").kernel_time_factor;
  EXPECT_GT(f.added_us, 0);
  EXPECT_LT(f.added_us, step * (factor - 1) / factor + 1);
  // Eight H100s: matrix kernels at the slowest one's pace (gpus.json matmul_spread).
  const auto& slowest = find(terms, "slowest GPU");
  EXPECT_TRUE(slowest.applies);
  EXPECT_GT(slowest.added_us, 0);
  EXPECT_NE(slowest.source.find("matmul_spread"), std::string::npos);
  // Hopper's FP8 forward GEMMs accumulate fast: taking the term out slows the step.
  const auto& fast = find(terms, "fp8 fast accumulation");
  EXPECT_TRUE(fast.applies);
  EXPECT_LT(fast.added_us, 0);
  EXPECT_NE(fast.source.find("fprop_fast_accum"), std::string::npos);
  for (const auto& t : terms)
    if (t.applies) EXPECT_NEAR(t.added_us, step - t.step_without_us, 1e-6) << t.term;
}

TEST(TermEffects, Bf16JobDoesNotRunTheFp8Terms) {
  const auto& db = lumos::cost::embedded_db();
  const auto q = nemotron_15b(lumos::cost::Dtype::kBf16);
  const double step = run_estimate(q, db).estimate.step_time_us;
  const auto terms = term_effects(q, db, step);
  EXPECT_FALSE(find(terms, "fp8 operand casts").applies);
  EXPECT_FALSE(find(terms, "fp8 amax/scale updates").applies);
  EXPECT_FALSE(find(terms, "fp8 all-gathers").applies);
  EXPECT_FALSE(find(terms, "fp8 param gathers").applies);
  EXPECT_FALSE(find(terms, "fp8 fast accumulation").applies);
  EXPECT_TRUE(find(terms, "optimizer step").applies);
  EXPECT_GT(find(terms, "optimizer step").added_us, 0);
  EXPECT_FALSE(find(terms, "grad accumulation").applies);  // Megatron-Core accumulates in place
}

// Current scaling (Megatron-Bridge's FP8-CS) quantizes a sequence-parallel input on the rank's
// shard before the gather, as delayed scaling does, and has no amax history or amax all-reduce of
// its own; its casts cost more than delayed scaling's, whose scale is known before the producer
// runs.
TEST(TermEffects, CurrentScalingGathersFp8WithoutAmaxHistories) {
  const auto& db = lumos::cost::embedded_db();
  auto q = nemotron_15b(lumos::cost::Dtype::kFp8);
  q.cfg.stack = "nemo-2025";
  const double step = run_estimate(q, db).estimate.step_time_us;
  const auto terms = term_effects(q, db, step);
  EXPECT_TRUE(find(terms, "fp8 all-gathers").applies);
  EXPECT_LT(find(terms, "fp8 all-gathers").added_us, 0);
  EXPECT_FALSE(find(terms, "fp8 amax/scale updates").applies);
  EXPECT_FALSE(find(terms, "fp8 amax reduction").applies);
  EXPECT_TRUE(find(terms, "fp8 param gathers").applies);
  auto d = nemotron_15b(lumos::cost::Dtype::kFp8);
  const auto delayed = term_effects(d, db, run_estimate(d, db).estimate.step_time_us);
  EXPECT_GT(find(terms, "fp8 operand casts").added_us, find(delayed, "fp8 operand casts").added_us);
}

// NeMo's FP8 userbuffers configs set fp8_buf on the attention projection's and FC2's
// reduce-scatters: the GEMMs write FP8 and the reduce-scatters move half the bytes. Off by
// default (Transformer Engine's); not run without userbuffers; refused for a BF16 job.
TEST(TermEffects, Fp8ReduceScatterBuffersOnlyWhereAsked) {
  const auto& db = lumos::cost::embedded_db();
  auto terms_of = [&](const EstimateRequest& q) {
    return term_effects(q, db, run_estimate(q, db).estimate.step_time_us);
  };
  auto q = nemotron_15b(lumos::cost::Dtype::kFp8);
  EXPECT_FALSE(find(terms_of(q), "fp8 reduce-scatters").applies);
  q.cfg.tp_comm_fp8_reduce_scatter = true;
  const auto on = terms_of(q);
  EXPECT_TRUE(find(on, "fp8 reduce-scatters").applies);
  EXPECT_LT(find(on, "fp8 reduce-scatters").added_us, 0);
  EXPECT_LT(run_estimate(q, db).estimate.step_time_us,
            run_estimate(nemotron_15b(lumos::cost::Dtype::kFp8), db).estimate.step_time_us);
  q.cfg.tp_comm_overlap = false;
  EXPECT_FALSE(find(terms_of(q), "fp8 reduce-scatters").applies);
  auto b = nemotron_15b(lumos::cost::Dtype::kBf16);
  b.cfg.tp_comm_fp8_reduce_scatter = true;
  EXPECT_THROW(run_estimate(b, db), lumos::InputError);
}
