// Layouts that differ only in their tensor, context or data parallel degrees and micro-batch size
// build one graph between them (docs/design.md, "Sweeps"), and every row still equals `lumos
// estimate` of its own configuration: a graph shared where the shape differs, or priced with the
// parameter counts of the layout it was built for, gives another step time.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cost/kernels_db.hpp"
#include "support/sweep_test_util.hpp"
#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"

namespace {

using namespace lumos::sweep;
using lumos::model::Recompute;

// A small GPT on two pipeline stages; tensor, data parallel degrees and micro-batch sizes vary.
SweepSpec degrees_spec() {
  SweepSpec s;
  s.model = lumos::model::preset("gpt3-15b");
  s.model.layers = 8;
  s.tp = {2, 4};
  s.pp = {2};
  s.dp = {2, 4, 8};
  s.mbs = {1, 2};
  s.gbs = {128};  // every layout's micro-batches fold
  s.gpus = {"h100"};
  return s;
}

struct Shared {
  uint64_t graphs = 0, layouts = 0;
};

// Runs the sweep, checks each row against its estimate, and counts graphs and layouts.
Shared run_and_check(const SweepSpec& spec, const std::string& what) {
  const auto& db = lumos::cost::embedded_db();
  SweepOptions opt;
  opt.backend = lumos::engine::Backend::kCpu;
  opt.threads = 1;
  const SweepResult r = run_sweep(spec, db, opt);
  std::set<std::string> layouts;
  for (const SweepRow& row : r.rows) {
    if (!row.feasible) continue;
    const auto e = lumos::test::estimate_of(spec, row, db);
    EXPECT_NEAR(row.step_time_us, e.step_time_us, 1e-9 * e.step_time_us)
        << what << ": tp " << row.variant.cfg.tp << " cp " << row.variant.cfg.cp << " dp "
        << row.variant.cfg.dp << " mbs " << row.variant.cfg.mbs;
    const auto& c = row.variant.cfg;
    layouts.insert(std::to_string(c.tp) + "/" + std::to_string(c.cp) + "/" + std::to_string(c.dp) +
                   "/" + std::to_string(c.mbs));
  }
  return {r.stats.graphs, layouts.size()};
}

// Twelve layouts (two tensor degrees, three data-parallel degrees, two micro-batch sizes), every
// row its estimate, in `graphs` graphs.
void expect_shared(const SweepSpec& spec, const std::string& what, uint64_t graphs) {
  const Shared s = run_and_check(spec, what);
  EXPECT_EQ(s.layouts, 12u) << what;
  EXPECT_EQ(s.graphs, graphs) << what;
}

}  // namespace

TEST(SharedShape, OneFOneBLayoutsOfOtherDegreesShareOneGraph) {
  // The distributed optimizer gathers the parameters in the gradient buckets, one a layer
  // wherever a layer fills one (over 2 GPUs as over 4): the same shape at every degree.
  expect_shared(degrees_spec(), "1F1B", 1);
}

TEST(SharedShape, DegreesWhoseLayersFillBucketsDifferentlyBuildAGraphEach) {
  // A layer of 113 M parameters fills a 40 M bucket over 2 GPUs (57 M), not over 4 (28 M, two
  // layers a bucket): another shape of buckets, another graph, each row still its estimate.
  SweepSpec spec = degrees_spec();
  spec.model.hidden = 3072;
  spec.model.head_dim = 64;
  spec.model.ffn = 4 * 3072;
  expect_shared(spec, "layers smaller than a bucket over 4 GPUs", 2);
}

TEST(SharedShape, AHeadSmallerThanABucketAtEveryDegreeSharesTheLastLayersBucket) {
  // A vocabulary of 8,192 makes the output layer 50 M parameters: 25 M over 2 GPUs, 13 M over 4,
  // short of a bucket at both, so the head's gradients close with the last layer's (gathered
  // last, waited for before the last layer) alike: one graph.
  SweepSpec spec = degrees_spec();
  spec.model.vocab = 8192;
  expect_shared(spec, "head with the last layer", 1);
}

TEST(SharedShape, WithoutTheDistributedOptimizerAllDegreesShareOneGraph) {
  SweepSpec spec = degrees_spec();
  spec.distributed_optimizer = {0};
  expect_shared(spec, "no distributed optimizer", 1);
}

TEST(SharedShape, InterleavedLayoutsShareOneGraph) {
  SweepSpec spec = degrees_spec();
  spec.interleave = {2};
  spec.gbs = {256};  // interleaved, 8 micro-batches on 2 stages are too few to fold
  expect_shared(spec, "interleaved", 1);
}

TEST(SharedShape, RecomputedLayoutsShareOneGraph) {
  SweepSpec spec = degrees_spec();
  spec.recompute = {Recompute::kFull};
  expect_shared(spec, "recompute", 1);
}

TEST(SharedShape, ContextParallelLayoutsShareOneGraph) {
  SweepSpec spec = degrees_spec();
  spec.cp = {2};
  spec.dp = {1, 2, 4};  // data and context parallel ranks reduce gradients together
  expect_shared(spec, "context parallel", 1);
}

TEST(SharedShape, FsdpLayoutsOfOtherDegreesShareOneGraph) {
  SweepSpec spec = degrees_spec();
  spec.fsdp = {1};
  expect_shared(spec, "FSDP", 1);
}

TEST(SharedShape, DataParallelAndSingleGpuStagesBuildGraphsOfTheirOwn) {
  // Without data parallel peers no gradient is reduced: another shape, another graph.
  SweepSpec spec = degrees_spec();
  spec.dp = {1, 2};
  spec.mbs = {1};
  spec.tp = {2};
  const Shared s = run_and_check(spec, "dp 1 and 2");
  EXPECT_EQ(s.layouts, 2u);
  EXPECT_EQ(s.graphs, 2u);
}
