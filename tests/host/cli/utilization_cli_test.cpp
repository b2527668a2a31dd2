// `lumos replay --utilization-bin/--utilization-csv` end to end: the CSV's columns and grid, a
// folder's rows per rank, the file written whole or not at all, and bad input in one line; and the
// replay report's count of the traced communication time spent waiting for peers.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "estimate/estimate.hpp"
#include "estimate/generated_trace.hpp"
#include "support/test_util.hpp"

using lumos::testing::expect_one_line_exit_1;
using lumos::testing::run_lumos;
using lumos::testing::TempDir;

namespace {

struct Row {
  int rank = 0;
  double start_us = 0, end_us = 0, traced = 0, replayed = 0;
};

std::vector<Row> parse_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "rank,bin_start_us,bin_end_us,traced_busy_fraction,replayed_busy_fraction");
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    Row r;
    char c = 0;
    std::istringstream ls(line);
    ls >> r.rank >> c >> r.start_us >> c >> r.end_us >> c >> r.traced >> c >> r.replayed;
    EXPECT_FALSE(ls.fail()) << line;
    rows.push_back(r);
  }
  return rows;
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A two-stage job written by `lumos generate`: one trace per stage, ranks 0 and 4.
std::string write_job(const TempDir& tmp) {
  lumos::estimate::EstimateRequest r;
  r.model = lumos::model::preset("gpt3-15b");
  r.model.layers = 4;
  r.cfg.tp = 2, r.cfg.pp = 2, r.cfg.dp = 2, r.cfg.gbs = 8;
  const auto run = lumos::estimate::run_estimate(r, lumos::cost::embedded_db());
  lumos::estimate::write_stage_traces(run.step, run.replay, tmp.file("job"), run.estimate.gpu);
  return tmp.file("job");
}

}  // namespace

TEST(UtilizationCli, DemoPrintsTheCsvInPlaceOfTheReport) {
  const auto r = run_lumos("replay --utilization-bin 250us");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = parse_csv(r.out);
  ASSERT_GT(rows.size(), 2u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_DOUBLE_EQ(rows[i].start_us, 250.0 * static_cast<double>(i));
    EXPECT_DOUBLE_EQ(rows[i].end_us - rows[i].start_us, 250.0);
    EXPECT_GE(rows[i].traced, 0);
    EXPECT_LE(rows[i].traced, 1);
    EXPECT_NEAR(rows[i].traced, rows[i].replayed, 1e-6);  // the demo replays exactly
  }
}

TEST(UtilizationCli, FolderWritesRowsPerRankBesideTheReport) {
  TempDir tmp;
  const std::string job = write_job(tmp);
  const auto r = run_lumos("replay " + job + " --utilization-csv " + tmp.file("u.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("slowest rank"), std::string::npos) << r.out;  // the report too
  const auto rows = parse_csv(read(tmp.file("u.csv")));
  std::set<int> ranks;
  double busy = 0;
  for (const auto& x : rows) ranks.insert(x.rank), busy += x.traced;
  EXPECT_EQ(ranks, (std::set<int>{0, 4}));
  EXPECT_GT(busy, 0);
  EXPECT_EQ(rows.front().end_us, 1000.0);  // 1ms unless told
}

TEST(UtilizationCli, ReportSaysHowMuchCommunicationWasWaiting) {
  TempDir tmp;
  const std::string job = write_job(tmp);
  const auto r = run_lumos("replay " + job + "/stage0.rank0.json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("of it waiting for peers"), std::string::npos) << r.out;
  const auto j = run_lumos("replay " + job + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.out;
  EXPECT_NE(j.out.find("\"comm_waits\":{\"kernels\":"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"rendezvous\":"), std::string::npos) << j.out;
}

TEST(UtilizationCli, BadInputIsOneLineAndNoFile) {
  TempDir tmp;
  expect_one_line_exit_1(run_lumos("replay --utilization-bin 5"), "--utilization-bin");
  expect_one_line_exit_1(run_lumos("replay --utilization-bin 2weeks"), "--utilization-bin");
  expect_one_line_exit_1(run_lumos("replay --utilization-bin -1ms"), "--utilization-bin");
  expect_one_line_exit_1(run_lumos("replay --utilization-bin 1ms --json"), "standard output");
  expect_one_line_exit_1(
      run_lumos("replay --utilization-bin 1ms --utilization-csv " + tmp.file("no/such/u.csv")),
      "u.csv");
  expect_one_line_exit_1(
      run_lumos("replay --utilization-bin 0.001us --utilization-csv " + tmp.file("u.csv")),
      "9.45e+06 bins of 0.001 us over the 9451 us timeline; at most 1000000 (use a bin of at "
      "least 0.00946 us)");
  // A bin of 1e-300 s printed a count of 300 digits.
  expect_one_line_exit_1(
      run_lumos("replay --utilization-bin 1e-300s --utilization-csv " + tmp.file("u.csv")),
      "utilization: 9.45e+297 bins of 1e-294 us");
  EXPECT_FALSE(std::filesystem::exists(tmp.file("u.csv")));
  // The bin it suggests does fit.
  EXPECT_EQ(run_lumos("replay --utilization-bin 0.00946us --utilization-csv " + tmp.file("u.csv"))
                .exit_code,
            0);
}
