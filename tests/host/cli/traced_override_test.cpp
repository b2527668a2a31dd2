// Saying what a traced job is through `lumos whatif`: --traced degrees and --group roles over
// what the trace shows, the bad input they can make (one line, exit 1), and folders that hold
// execution traces beside the Kineto traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;

// A job of 8 GPUs (llama3-8b, 4 layers, tp 4, pp 2, dp 1) with its TP collectives on their own
// stream and numbered groups: 0 and 1 pipeline, 2 and 3 tensor parallel (one per stage).
std::string numbered_job(const lumos::testing::TempDir& tmp, const std::string& extra = "") {
  const std::string dir = tmp.file("job");
  const auto g = run_lumos("generate --model llama3-8b --layers 4 --tp 4 --pp 2 --dp 1 --gbs 4 " +
                           extra + " --tp-comm-stream separate --group-names numbers -o " + dir);
  EXPECT_EQ(g.exit_code, 0) << g.out;
  return dir;
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// A refusal: exit 1 and one line that holds `part`.
void expect_refused(const std::string& args, const std::string& part) {
  const auto r = run_lumos(args);
  EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
  EXPECT_EQ(lines(r.out), 1) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(part), std::string::npos) << args << "\n" << r.out;
}

}  // namespace

TEST(TracedOverride, DescribeFindsTheTensorDegreeOfANumberedJob) {
  lumos::testing::TempDir tmp;
  const auto r = run_lumos("whatif " + numbered_job(tmp) + " --describe");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("degrees: tp 4, cp 1, dp 1, pp 2"), std::string::npos) << r.out;
}

TEST(TracedOverride, TracedDegreesWinOverWhatTheTraceSuggestsWithAWarning) {
  lumos::testing::TempDir tmp;
  const std::string job = numbered_job(tmp);
  const auto r = run_lumos("whatif " + job + " --describe --traced tp=2,dp=2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("degrees: tp 2, cp 1, dp 2, pp 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lumos whatif: warning: given tp 2 (--traced), where the trace suggests 4"),
            std::string::npos)
      << r.out;
  // A degree given alone must still fill the world: 2 x 1 x 2 stages is 4 of 8 GPUs.
  expect_refused("whatif " + job + " --describe --traced tp=2", "impossible layout");
  expect_refused("whatif " + job + " --describe --traced tp=2,pp=9,dp=1", "impossible layout");
  expect_refused("whatif " + job + " --describe --traced tp=0", "--traced: tp");
  expect_refused("whatif " + job + " --describe --traced ranks=4", "unknown degree 'ranks'");
  expect_refused("whatif " + job + " --describe --traced tp", "expected NAME=VALUE");
}

TEST(TracedOverride, GroupRolesOverrideByNameOrPosition) {
  lumos::testing::TempDir tmp;
  const std::string job = numbered_job(tmp);
  // Both TP groups (one per stage) called data parallel: tp 1 x dp 4 x pp 2 = 8, possible.
  const auto r = run_lumos("whatif " + job + " --describe --group 2=dp --group '#3'=dp");
  // '#3' names no group: refused, naming the groups there are.
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("#0 0, #1 1, #2 2, #3 3"), std::string::npos) << r.out;
  const auto ok = run_lumos("whatif " + job + " --describe --group 2=dp --group 3=dp --json");
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("\"tp\":1"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("\"dp\":4"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("\"role_from\":\"--group\""), std::string::npos) << ok.out;
  // One TP group called data parallel leaves tp 4 and adds dp 4: 16 GPUs per stage, of 8.
  expect_refused("whatif " + job + " --describe --group 2=dp", "does not divide");
  expect_refused("whatif " + job + " --describe --group 2=tensor", "unknown role 'tensor'");
  expect_refused("whatif " + job + " --describe --group 7=tp", "--group 7: the trace has no");
}

// A group the trace names and sizes itself is not contradicted by --traced: --group says the
// name misleads.
TEST(TracedOverride, TracedDegreesThatContradictANamedGroupAreRefused) {
  lumos::testing::TempDir tmp;
  const std::string job = tmp.file("named");
  ASSERT_EQ(
      run_lumos("generate --model llama3-8b --layers 4 --tp 4 --pp 1 --dp 2 --gbs 8 -o " + job)
          .exit_code,
      0);
  expect_refused("whatif " + job + " --describe --traced tp=8,dp=1",
                 "--traced tp=8 contradicts the trace: group tp/stage0 is named for tensor "
                 "parallel (its name) and has 4 ranks (NCCL args)");
  const auto r =
      run_lumos("whatif " + job + " --describe --group tp/stage0=dp --group dp/stage0=tp");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("degrees: tp 2, cp 1, dp 4, pp 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("given: group tp/stage0: data parallel (--group), where the trace "
                       "suggests tensor parallel (its name)"),
            std::string::npos)
      << r.out;
}

// The model checked against the traced GEMMs at the degrees given: the message names the GEMM,
// the dimension, and the tensor degree that matches.
TEST(TracedOverride, AModelThatDisagreesWithTheTracedShapesSaysWhichDimension) {
  lumos::testing::TempDir tmp;
  const std::string job = numbered_job(tmp);
  expect_refused("whatif " + job + " --model llama3-8b --layers 8 --group 2=dp --group 3=dp",
                 "GEMM 1 of the layer differs in N: traced 8192 x 1536 x 4096, modelled 8192 x "
                 "6144 x 4096; the traced shapes match tp 4 (--traced tp=4)");
  const auto r = run_lumos("whatif " + job + " --model llama3-8b --layers 8");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// A torchtitan job runs wq, wk, wv and w1, w3 apart: read under a stack that fuses them, the
// message names the stack whose shapes match; under that stack it is read.
TEST(TracedOverride, ProjectionsRunApartPointToTheStackThatRunsThem) {
  lumos::testing::TempDir tmp;
  const std::string job = tmp.file("titan");
  ASSERT_EQ(run_lumos("generate --model llama3-8b --layers 4 --tp 4 --pp 1 --dp 2 --gbs 8 --sp "
                      "--stack torchtitan -o " +
                      job)
                .exit_code,
            0);
  expect_refused("whatif " + job + " --model llama3-8b --layers 4",
                 "the traced shapes match stack torchtitan, whose projections run apart "
                 "(--stack torchtitan)");
  const auto r = run_lumos("whatif " + job + " --model llama3-8b --layers 4 --stack torchtitan");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::string fused = tmp.file("fused");
  ASSERT_EQ(
      run_lumos("generate --model llama3-8b --layers 4 --tp 4 --pp 1 --dp 2 --gbs 8 --sp -o " +
                fused)
          .exit_code,
      0);
  expect_refused("whatif " + fused + " --model llama3-8b --layers 4 --stack torchtitan",
                 "the traced layer runs its projections fused (one QKV and one FC1 GEMM)");
}

TEST(TracedOverride, HintsNeedSomethingToApplyTo) {
  lumos::testing::TempDir tmp;
  const std::string job = numbered_job(tmp);
  expect_refused("whatif " + job + " --traced tp=4,pp=2,dp=1", "say what the traced job is");
}

// Execution traces (and other JSON without traceEvents) beside the rank traces are skipped,
// each named on one line; the job is read as it would be without them.
TEST(TracedOverride, FoldersSkipFilesThatAreNotKinetoTraces) {
  lumos::testing::TempDir tmp;
  const std::string job = numbered_job(tmp);
  const auto plain = run_lumos("whatif " + job + " --describe");
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  std::ofstream(job + "/rank0_et_0.json")
      << R"({"schema": "1.0.1", "pid": 1, "time": "2026-01-01", "start_ts": 0, "nodes": [],)"
      << R"( "finish_ts": 1})";
  std::ofstream(job + "/notes.json") << R"({"comment": "not a trace"})";
  const auto r = run_lumos("whatif " + job + " --describe");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("rank0_et_0.json: a PyTorch execution trace ('schema' and 'nodes'), not a "
                       "Kineto trace (no 'traceEvents'); skipped"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("notes.json: field 'traceEvents': missing (expected an array of events); "
                       "skipped"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(plain.out), std::string::npos) << "the same description after the lines";
  const auto replay = run_lumos("replay " + job);
  EXPECT_EQ(replay.exit_code, 0) << replay.out;
  EXPECT_NE(replay.out.find("rank0_et_0.json"), std::string::npos) << replay.out;
  // A folder of nothing but execution traces has no job in it.
  lumos::testing::TempDir only;
  std::ofstream(only.file("a_et_0.json")) << R"({"schema": "1.0.1", "nodes": []})";
  expect_refused("whatif " + only.path() + " --describe", "no Kineto traces in the folder");
}

// `lumos sweep --trace` recognises the job with the same code and takes the same options.
TEST(TracedOverride, SweepTraceTakesTheSameOptions) {
  lumos::testing::TempDir tmp;
  const std::string job = numbered_job(tmp);
  const auto r = run_lumos("sweep --trace " + job + " --model llama3-8b --top 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tp 4  cp 1  pp 2  dp 1"), std::string::npos) << r.out;
  expect_refused("sweep --trace " + job + " --model llama3-8b --top 1 --group 2=dp --group 3=dp",
                 "the traced shapes match tp 4 (--traced tp=4)");
  expect_refused("sweep --model llama3-8b --traced tp=2", "they go with --trace");
}
