// Every --help ends with examples, `lumos cost --help` lists its kinds, and a mistyped option,
// command, preset, GPU or region is answered with the name that was likely meant.
#include <gtest/gtest.h>

#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::expect_one_line_exit_1;
using lumos::testing::run_lumos;

TEST(Help, EveryCommandsHelpHasAnExamplesSection) {
  for (const char* cmd : {"",
                          "replay",
                          "ingest",
                          "estimate",
                          "generate",
                          "whatif",
                          "sweep",
                          "pareto",
                          "place",
                          "carbon",
                          "demo-trace",
                          "cost",
                          "cost gemm",
                          "cost attention",
                          "cost collective",
                          "cost memory",
                          "cost optimizer",
                          "cost memcpy",
                          "cost classify",
                          "cost gpus",
                          "bench",
                          "bench batch",
                          "bench estimate",
                          "bench whatif",
                          "info"}) {
    const auto r = run_lumos(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.out;
    const size_t at = r.out.find("Examples:\n  lumos ");
    EXPECT_NE(at, std::string::npos) << "lumos " << cmd << " --help:\n" << r.out;
  }
}

TEST(Help, CostHelpListsEveryKind) {
  const auto r = run_lumos("cost --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* kind :
       {"gemm", "attention", "collective", "memory", "optimizer", "memcpy", "classify", "gpus"})
    EXPECT_NE(r.out.find("\n  " + std::string(kind) + " "), std::string::npos) << kind << r.out;
}

TEST(DidYouMean, MisspeltOptionNamesTheOptionMeant) {
  expect_one_line_exit_1(run_lumos("sweep --spce x.toml"),
                         "unknown option '--spce' (did you mean '--spec'?)");
  expect_one_line_exit_1(run_lumos("estimate --serach --gpus 64"),
                         "unknown option '--serach' (did you mean '--search'?)");
  expect_one_line_exit_1(run_lumos("cost gemm --dtpye bf16 --m 1 --n 1 --k 1"),
                         "(did you mean '--dtype'?)");
}

TEST(DidYouMean, MisspeltOptionFarFromAnyIsNamedWithoutAGuess) {
  const auto r = run_lumos("sweep --frobnicate");
  expect_one_line_exit_1(r, "unknown option '--frobnicate'");
  EXPECT_EQ(r.out.find("did you mean"), std::string::npos) << r.out;
}

TEST(DidYouMean, MisspeltCommandAndKind) {
  expect_one_line_exit_1(run_lumos("sweeep"), "unknown command 'sweeep' (did you mean 'sweep'?)");
  expect_one_line_exit_1(run_lumos("cost gem"), "unknown kind 'gem' (did you mean 'gemm'?)");
  expect_one_line_exit_1(run_lumos("bench bach"), "(did you mean 'batch'?)");
}

TEST(DidYouMean, MisspeltPresetGpuAndRegion) {
  expect_one_line_exit_1(run_lumos("estimate --model lama3-70b"),
                         "unknown model 'lama3-70b' (did you mean 'llama3-70b'?)");
  expect_one_line_exit_1(run_lumos("estimate --gpu h1000"),
                         "unknown GPU 'h1000' (did you mean 'h100'?)");
  expect_one_line_exit_1(run_lumos("carbon --region frr"),
                         "unknown region 'frr' (did you mean 'fr'?)");
}

}  // namespace
