// What a layout search and a sweep report about the layouts they do not show, the rows the
// estimate cannot tell apart, the memory each leaves free, and their one CSV schema.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

// 20 layers of Llama 3 70B on 16 H100s: some layouts do not fit, the fastest barely do.
const std::string kSearch = "estimate --search --model llama3-70b --layers 20 --gpus 16 --gbs 32";

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "N of M ... not shown: a why, b why, ...": N, M and the sum of the parts.
struct Tally {
  long not_shown = -1, total = -1, parts = 0;
};
Tally tally_of(const std::string& out) {
  std::smatch m;
  Tally t;
  if (!std::regex_search(out, m,
                         std::regex(R"((\d+) of (\d+) (layouts|configurations) not shown(.*))")))
    return t;
  t.not_shown = std::stol(m[1]), t.total = std::stol(m[2]);
  const std::string rest = m[4];
  const std::regex part(R"([:,] (\d+) )");
  for (std::sregex_iterator it(rest.begin(), rest.end(), part), end; it != end; ++it)
    t.parts += std::stol((*it)[1]);
  return t;
}

TEST(SearchReport, TheDroppedTallyAccountsForEveryLayoutNotShown) {
  const auto r = run_lumos(kSearch + " --top 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Tally t = tally_of(r.out);
  ASSERT_GT(t.total, 0) << r.out;
  EXPECT_EQ(t.total - t.not_shown, 4) << r.out;
  EXPECT_EQ(t.parts, t.not_shown) << r.out;
  EXPECT_NE(r.out.find("do not fit in memory"), std::string::npos) << r.out;
}

TEST(SearchReport, TiesLieInsideTheBestRangeAndHeadroomIsTheFreeShareOfMemory) {
  const auto r = run_lumos(kSearch + " --top 100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_FALSE(p.parse(r.out).get(d)) << r.out;
  uint64_t candidates = 0, invalid = 0, too_big = 0, too_tight = 0, too_large = 0, estimated = 0;
  ASSERT_FALSE(d["candidates"].get(candidates));
  ASSERT_FALSE(d["invalid"].get(invalid));
  ASSERT_FALSE(d["too_big"].get(too_big));
  ASSERT_FALSE(d["too_tight"].get(too_tight));
  ASSERT_FALSE(d["too_large"].get(too_large));
  ASSERT_FALSE(d["estimated"].get(estimated));
  EXPECT_EQ(invalid + too_big + too_tight + too_large + estimated, candidates);
  double capacity = 0;
  ASSERT_FALSE(d["capacity_bytes"].get(capacity));
  EXPECT_DOUBLE_EQ(capacity, 80.0 * 1024 * 1024 * 1024);  // an H100's 80 GiB
  simdjson::dom::array layouts;
  ASSERT_FALSE(d["layouts"].get(layouts));
  double best_low = 0, best_high = 0;
  size_t ties = 0, others = 0, i = 0;
  for (simdjson::dom::element l : layouts) {
    double step = 0, memory = 0, headroom = 0;
    int64_t gpus = 0, tp = 0, cp = 0, pp = 0, dp = 0;
    ASSERT_FALSE(l["step_time_s"].get(step));
    ASSERT_FALSE(l["memory_bytes"].get(memory));
    ASSERT_FALSE(l["headroom_fraction"].get(headroom));
    EXPECT_NEAR(headroom, 1.0 - memory / capacity, 1e-12);
    ASSERT_FALSE(l["gpus"].get(gpus));
    ASSERT_FALSE(l["tp"].get(tp));
    ASSERT_FALSE(l["cp"].get(cp));
    ASSERT_FALSE(l["pp"].get(pp));
    ASSERT_FALSE(l["dp"].get(dp));
    EXPECT_EQ(tp * cp * pp * dp, gpus);  // the layout adds up
    bool tie = false;
    ASSERT_FALSE(l["tie_with_best"].get(tie));  // H100 + Megatron-Core has published runs
    if (i++ == 0) {
      ASSERT_FALSE(l["step_time_low_s"].get(best_low));
      ASSERT_FALSE(l["step_time_high_s"].get(best_high));
      EXPECT_TRUE(tie);
      continue;
    }
    EXPECT_EQ(tie, step >= best_low && step <= best_high) << step;
    (tie ? ties : others)++;
  }
  EXPECT_GT(ties, 0u);  // the estimate's range is wider than the gap to the next layouts
  EXPECT_GT(others, 0u);
}

// The headroom_fraction column of a search's CSV printed in place of the report.
std::vector<double> headrooms(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  const size_t k = static_cast<size_t>(
      std::find(header.begin(), header.end(), "headroom_fraction") - header.begin());
  std::vector<double> out;
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::string c;
    for (size_t i = 0; i <= k && std::getline(ls, c, ','); ++i) {
    }
    out.push_back(std::stod(c));
  }
  return out;
}

TEST(SearchReport, MinHeadroomRanksOnlyLayoutsWithRoom) {
  const auto all = run_lumos(kSearch + " --top 0 --csv -");
  const auto roomy = run_lumos(kSearch + " --top 0 --csv - --min-headroom 25%");
  const auto json = run_lumos(kSearch + " --top 0 --json --min-headroom 0.25");
  ASSERT_EQ(all.exit_code, 0) << all.out;
  ASSERT_EQ(roomy.exit_code, 0) << roomy.out;
  ASSERT_EQ(json.exit_code, 0) << json.out;
  size_t tight_in_all = 0;
  const std::vector<double> a = headrooms(all.out), b = headrooms(roomy.out);
  for (double h : a) tight_in_all += h < 0.25;
  for (double h : b) EXPECT_GE(h, 0.25);
  ASSERT_GT(tight_in_all, 0u);
  EXPECT_EQ(b.size(), a.size() - tight_in_all);
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_FALSE(p.parse(json.out).get(d)) << json.out;
  uint64_t too_tight = 0;
  double share = 0;
  ASSERT_FALSE(d["too_tight"].get(too_tight));
  ASSERT_FALSE(d["min_headroom_fraction"].get(share));
  EXPECT_EQ(too_tight, tight_in_all);
  EXPECT_EQ(share, 0.25);
  const auto bad = run_lumos(kSearch + " --min-headroom 120%");
  lumos::testing::expect_one_line_exit_1(bad, "--min-headroom");
}

TEST(SearchReport, TheTextMarksTightLayouts) {
  const auto r = run_lumos(kSearch + " --top 40");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::istringstream in(r.out);
  size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_search(line, std::regex(R"(^\s+\d+\s+16\s)"))) continue;  // a layout row
    std::smatch free;
    ASSERT_TRUE(std::regex_search(line, free, std::regex(R"((\d+)%(  fits, tight)?\s*$)"))) << line;
    EXPECT_EQ(free[2].matched, std::stoi(free[1]) < 10) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 40u) << r.out;
}

TEST(SearchReport, TheSearchAndTheSweepWriteOneCsvSchema) {
  TempDir tmp;
  const auto s = run_lumos(kSearch + " --top 1 --csv " + tmp.file("s.csv"));
  ASSERT_EQ(s.exit_code, 0) << s.out;
  const auto w = run_lumos("sweep --model llama3-8b --layers 8 --gpus 16 --tp 1,2 --pp 1,2 -o " +
                           tmp.file("v.csv"));
  ASSERT_EQ(w.exit_code, 0) << w.out;
  const std::string header = first_line(tmp.file("s.csv"));
  EXPECT_EQ(header, first_line(tmp.file("v.csv")));
  for (const char* c : {"tp,cp,pp,dp,interleave,mbs", "step_time_s,tokens_per_s,mfu,memory_gib",
                        "step_time_low_s,step_time_high_s,tie_with_best", "headroom_fraction"})
    EXPECT_NE(header.find(c), std::string::npos) << c << " in " << header;
  // A sweep of the same layouts gives the same step time as the search for the same layout.
  EXPECT_EQ(header.find("sequence_parallel"), std::string::npos);
}

TEST(SweepReport, TheDroppedTallyAccountsForEveryConfigurationNotShown) {
  const auto r = run_lumos(
      "sweep --model llama3-70b --layers 20 --gpus 8..16 --tp 1,2,4 --pp 1,2 --gpu h100,a100 --top "
      "3");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Tally t = tally_of(r.out);
  ASSERT_GT(t.total, 0) << r.out;
  EXPECT_EQ(t.parts, t.not_shown) << r.out;
  EXPECT_NE(r.out.find("do not fit in memory"), std::string::npos) << r.out;
  // Every Pareto line names the whole layout: tp x cp x pp x dp = GPUs.
  std::istringstream in(r.out);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(
            line, m,
            std::regex(
                R"((\d+) GPUs\s+tp (\d+)\s+cp (\d+)\s+pp (\d+)\s+dp (\d+)\s+v (\d+)\s+mbs (\d+))")))
      continue;
    ++lines;
    EXPECT_EQ(std::stol(m[2]) * std::stol(m[3]) * std::stol(m[4]) * std::stol(m[5]),
              std::stol(m[1]))
        << line;
  }
  EXPECT_GT(lines, 0u) << r.out;
}

}  // namespace

namespace {

TEST(SweepReport, TiesLieInsideTheFastestRangeOfTimeToTrain) {
  const auto r = lumos::testing::run_lumos(
      "sweep --model llama3-8b --gpus 16 --gpu h100 --tp 1,2 --cp 1,2,4 --pp 1,2 --mbs 1,2 --gbs "
      "64 "
      "--top 8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::istringstream in(r.out);
  const std::regex row(R"(\s(\d+\.\d)\s+(\d+\.\d)-(\d+\.\d)\s+(best|tie)?\s)");
  double best_high = -1;
  size_t rows = 0, ties = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    const double ttt = std::stod(m[1]), low = std::stod(m[2]), high = std::stod(m[3]);
    EXPECT_LE(low, ttt + 0.05) << line;
    EXPECT_GE(high, ttt - 0.05) << line;
    if (rows++ == 0) {
      EXPECT_EQ(m[4], "best") << line;
      best_high = high;
      continue;
    }
    const bool tie = m[4] == "tie";
    ties += tie;
    // One decimal in the text: a row within its rounding of the edge may go either way.
    if (std::fabs(ttt - best_high) > 0.1) EXPECT_EQ(tie, ttt <= best_high) << line;
  }
  EXPECT_GT(rows, 1u) << r.out;
  EXPECT_GT(ties, 0u) << r.out;
}

}  // namespace
