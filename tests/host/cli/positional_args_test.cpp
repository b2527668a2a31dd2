// An argument a command does not take is an error naming it (one line, exit code 1), never
// ignored: `lumos sweep my.toml` does not run the default sweep, `lumos replay a b` does not
// replay a alone. And `lumos replay DIR --speed` applies the factors to every rank.
#include <gtest/gtest.h>

#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::expect_one_line_exit_1;
using lumos::testing::run_lumos;
using lumos::testing::TempDir;

TEST(PositionalArgs, ASweepFileWithoutSpecIsRefusedSuggestingSpec) {
  TempDir tmp;
  const std::string spec = tmp.write("my.toml", "[sweep]\ntp = \"1\"\n");
  const auto r = run_lumos("sweep " + spec + " -o " + tmp.file("v.csv"));
  expect_one_line_exit_1(r, "lumos sweep: unexpected argument '" + spec + "'");
  EXPECT_NE(r.out.find("--spec " + spec), std::string::npos) << r.out;
}

TEST(PositionalArgs, ASecondTraceIsRefusedByReplayWhatifIngestAndClassify) {
  TempDir tmp;
  ASSERT_EQ(run_lumos("demo-trace -o " + tmp.file("a.json")).exit_code, 0);
  ASSERT_EQ(run_lumos("demo-trace -o " + tmp.file("b.json")).exit_code, 0);
  const std::string two = tmp.file("a.json") + " " + tmp.file("b.json");
  expect_one_line_exit_1(run_lumos("replay " + two),
                         "lumos replay: unexpected argument '" + tmp.file("b.json") + "'");
  expect_one_line_exit_1(run_lumos("whatif " + two + " --gpus h100"),
                         "lumos whatif: unexpected argument '" + tmp.file("b.json") + "'");
  expect_one_line_exit_1(run_lumos("ingest " + two + " -o " + tmp.file("g.lgraph")),
                         "lumos ingest: unexpected argument '" + tmp.file("b.json") + "'");
  expect_one_line_exit_1(run_lumos("cost classify " + two),
                         "lumos cost classify: unexpected argument '" + tmp.file("b.json") + "'");
}

TEST(PositionalArgs, EveryExtraArgumentIsNamed) {
  expect_one_line_exit_1(run_lumos("replay a.json b.json c.json"),
                         "unexpected arguments 'b.json', 'c.json'");
}

TEST(PositionalArgs, CommandsWithoutPositionalsRefuseOne) {
  TempDir tmp;
  for (const std::string& c :
       {std::string("demo-trace -o ") + tmp.file("d.json") + " extra", std::string("info extra"),
        std::string("cost gemm --m 128 --n 128 --k 128 extra"),
        std::string("bench batch --nodes 100 --variants 2 extra"),
        std::string("bench whatif extra"), std::string("bench estimate extra"),
        std::string("estimate extra"), std::string("carbon extra")})
    expect_one_line_exit_1(run_lumos(c), "unexpected argument 'extra'");
}

// The replayed time of the job's slowest rank, from "slowest rank: R (X us replayed)".
double slowest_us(const std::string& report) {
  const size_t at = report.find("slowest rank: ");
  const size_t paren = report.find(" (", at);
  return at == std::string::npos || paren == std::string::npos
             ? -1.0
             : std::stod(report.substr(paren + 2));
}

TEST(PositionalArgs, ReplayOfAFolderAppliesSpeed) {
  TempDir tmp;
  ASSERT_EQ(run_lumos("generate --layers 4 --pp 2 --gbs 8 -o " + tmp.file("job")).exit_code, 0);
  const auto plain = run_lumos("replay " + tmp.file("job"));
  const auto fast = run_lumos("replay " + tmp.file("job") + " --speed compute=2");
  const auto slow = run_lumos("replay " + tmp.file("job") + " --speed compute=0.5");
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  ASSERT_EQ(fast.exit_code, 0) << fast.out;
  ASSERT_EQ(slow.exit_code, 0) << slow.out;
  // Faster compute shortens the replayed job, slower lengthens it (as for one rank's trace).
  ASSERT_GT(slowest_us(plain.out), 0) << plain.out;
  EXPECT_LT(slowest_us(fast.out), 0.95 * slowest_us(plain.out)) << fast.out;
  EXPECT_GT(slowest_us(slow.out), 1.05 * slowest_us(plain.out)) << slow.out;
  expect_one_line_exit_1(run_lumos("replay " + tmp.file("job") + " --speed bogus=2"),
                         "--speed: unknown class 'bogus'");
}

}  // namespace
