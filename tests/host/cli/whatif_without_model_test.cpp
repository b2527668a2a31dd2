// `lumos whatif TRACE --layers N` and `--dp N` need no model (docs/design.md "Trace-driven
// what-ifs"): the traced layer count comes from the recognised passes (or `--traced layers=L`),
// and the optimizer and gradient reductions scale with parameters estimated from the traced GEMM
// shapes. On generated jobs made to differ from the model (modified_jobs.hpp), the answer
// without a model must agree with the answer with one within 1%, and with the replay of the job
// written at the edited configuration under the same rule within 3%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "estimate/trace_graph_edit.hpp"
#include "estimate/trace_structural.hpp"
#include "estimate/trace_whatif.hpp"
#include "host/estimate/modified_jobs.hpp"
#include "support/test_util.hpp"

using lumos::estimate::first_step_us;
using lumos::testing::modified_job;
using lumos::testing::Rule;
using lumos::testing::run_lumos;
using lumos::testing::small_job;

namespace {

struct NoModelCase {
  const char* name;
  int pp;
  int64_t layers_a, layers_b;
  int dp_a, dp_b;
  Rule rule;
};

void PrintTo(const NoModelCase& c, std::ostream* os) {
  *os << c.name;
}

lumos::estimate::StructuralAnswer edit(const lumos::graph::LoadedInput& in, const NoModelCase& k,
                                       bool with_model) {
  lumos::estimate::StructuralRequest req;
  if (with_model) req.model = lumos::testing::small_model();
  if (k.layers_b != k.layers_a) req.edit.layers = k.layers_b;
  if (k.dp_b != k.dp_a) req.edit.dp = k.dp_b;
  return lumos::estimate::run_structural_whatif(in, req, lumos::cost::embedded_db());
}

}  // namespace

class WhatifWithoutModel : public ::testing::TestWithParam<NoModelCase> {};

TEST_P(WhatifWithoutModel, AgreesWithTheModelsAnswerAndWithTheEditedJob) {
  const NoModelCase& k = GetParam();
  lumos::testing::TempDir tmp;
  const auto a = modified_job(small_job(k.pp, k.layers_a, k.dp_a), k.rule, tmp.file("a"));
  const auto b = modified_job(small_job(k.pp, k.layers_b, k.dp_b), k.rule, tmp.file("b"));
  const double truth = first_step_us(b.graph);
  const auto without = edit(a, k, false), with = edit(a, k, true);
  std::printf("%-26s B %10.1f us  no model %10.1f us (%+.2f%%)  model %10.1f us (%+.3f%%)\n",
              k.name, truth, without.predicted_us, (without.predicted_us / truth - 1) * 100,
              with.predicted_us, (without.predicted_us / with.predicted_us - 1) * 100);
  EXPECT_FALSE(without.model_given);
  EXPECT_EQ(without.path.rfind("traced-graph edit", 0), 0u) << without.path;
  EXPECT_NE(without.path.find("no model: "), std::string::npos) << without.path;
  EXPECT_EQ(without.traced.model.layers, k.layers_a);
  EXPECT_NEAR(without.predicted_us, with.predicted_us, 0.01 * with.predicted_us);
  EXPECT_NEAR(without.predicted_us, truth, 0.03 * truth);
}

INSTANTIATE_TEST_SUITE_P(
    ModifiedGeneratedJobs, WhatifWithoutModel,
    ::testing::Values(
        NoModelCase{"cpu_x30_pp1_layers_4_to_8", 1, 4, 8, 1, 1, lumos::testing::slow_cpu},
        NoModelCase{"cpu_x30_pp2_layers_8_to_16", 2, 8, 16, 1, 1, lumos::testing::slow_cpu},
        NoModelCase{"python_gap_pp2_layers_8_to_4", 2, 8, 4, 1, 1, lumos::testing::python_gap},
        NoModelCase{"python_gap_pp1_layers_8_to_4", 1, 8, 4, 1, 1, lumos::testing::python_gap},
        NoModelCase{"cpu_x30_dp_2_to_8", 1, 4, 4, 2, 8, lumos::testing::slow_cpu},
        NoModelCase{"cpu_x30_pp2_layers_4_to_8_dp_2_to_8", 2, 4, 8, 2, 8,
                    lumos::testing::slow_cpu}),
    [](const auto& info) { return std::string(info.param.name); });

// `--dp` alone reprices the data-parallel collectives of the traced graph; it never needed a
// model, and it agrees with the structural path's answer with one.
TEST(WhatifWithoutModel, DataParallelAloneAgreesWithTheModelsAnswer) {
  lumos::testing::TempDir tmp;
  const auto a = modified_job(small_job(1, 4, 2), lumos::testing::slow_cpu, tmp.file("a"));
  lumos::estimate::WhatifRequest w;
  w.dp = 8;
  const double alone =
      lumos::estimate::run_whatif(a, w, lumos::cost::embedded_db()).result.makespan_us[0];
  const auto with = edit(a, {"dp", 1, 4, 4, 2, 8, lumos::testing::slow_cpu}, true);
  EXPECT_NEAR(alone, with.predicted_us, 0.01 * with.predicted_us);
}

TEST(WhatifWithoutModel, TheCommandEditsLayersWithoutAModel) {
  lumos::testing::TempDir tmp;
  const std::string job = tmp.file("job");
  const auto g =
      run_lumos("generate --model llama3-8b --layers 4 --tp 1 --pp 2 --dp 1 --gbs 4 -o " + job);
  ASSERT_EQ(g.exit_code, 0) << g.out;
  const auto r = run_lumos("whatif " + job + " --layers 8");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("(no model), 4 layers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("path      traced-graph edit (layers duplicated"), std::string::npos)
      << r.out;
  const auto j = run_lumos("whatif " + job + " --layers 2 --json");
  EXPECT_EQ(j.exit_code, 0) << j.out;
  EXPECT_NE(j.out.find("\"predicted_us\""), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find("\"rebuild_predicted_us\""), std::string::npos) << j.out;
  // A layer count within --layers' range whose edited graph is beyond what lumos builds is
  // refused before the copies are made (it ran out of memory before).
  const auto huge = run_lumos("whatif " + job + " --layers 16777216", 60);
  EXPECT_EQ(huge.exit_code, 1) << huge.out;
  EXPECT_EQ(std::count(huge.out.begin(), huge.out.end(), '\n'), 1) << huge.out;
  EXPECT_NE(huge.out.find("more than the limit of 20000000"), std::string::npos) << huge.out;
}

// An edit that needs the model's dimensions says so, in one line.
TEST(WhatifWithoutModel, ShapeEditsWithoutAModelAreRefusedInOneLine) {
  lumos::testing::TempDir tmp;
  const std::string job = tmp.file("job");
  ASSERT_EQ(
      run_lumos("generate --model llama3-8b --layers 4 --tp 1 --pp 1 --dp 1 --gbs 2 -o " + job)
          .exit_code,
      0);
  for (const char* flag : {"--hidden 8192", "--seq 4096", "--tp 2", "--mbs 2"}) {
    const auto r = run_lumos("whatif " + job + " " + flag);
    EXPECT_EQ(r.exit_code, 1) << flag << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << flag << "\n" << r.out;
    EXPECT_NE(r.out.find("give --model PRESET or --model-file FILE"), std::string::npos) << r.out;
  }
  // A layer count the user gives that is not a whole number of traced instances.
  const auto bad = run_lumos("whatif " + job + " --layers 8 --traced layers=3");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("--traced layers=3"), std::string::npos) << bad.out;
}

// The shared B200 trace (rank 0 of a TP 8 forward pass) needs no model either: the traced layer
// count as recognised (18 instances of a sliding- and a full-attention layer) or as the user
// says it (`--traced layers=36`) edits the same instances, and an edit of nothing replays the
// trace.
TEST(WhatifWithoutModel, TheSharedForwardTraceIsEditedWithoutAModel) {
  LUMOS_REQUIRE_TRACES();
  const auto in =
      lumos::graph::load_job(lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz");
  auto layers = [&](int64_t n, int64_t traced) {
    lumos::estimate::StructuralRequest req;
    req.edit.layers = n;
    req.hints.traced.layers = traced;
    return lumos::estimate::run_structural_whatif(in, req, lumos::cost::embedded_db());
  };
  const auto same = layers(18, -1);
  EXPECT_NEAR(same.predicted_us, same.trace_replay_us, 1e-4 * same.trace_replay_us);
  const auto recognised = layers(36, -1), given = layers(72, 36);
  EXPECT_EQ(given.traced.model.layers, 36);
  EXPECT_NE(given.path.find("instances of 2 layers"), std::string::npos) << given.path;
  EXPECT_NEAR(given.predicted_us, recognised.predicted_us, 1e-6 * recognised.predicted_us);
  EXPECT_GT(given.predicted_us, 1.5 * given.trace_replay_us);
}
