// `lumos place --sweep-grid-intensity / --sweep-lifetime` and `--case-study-model` through the
// command: the CSV's columns and rows, and bad input as one line with exit code 1 and no file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

std::string fleet(const std::string& name) {
  return std::string(LUMOS_EXAMPLES_DIR) + "/fleets/" + name;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(PlaceSensitivityCli, EachSweepWritesOneRowPerValue) {
  TempDir tmp;
  const std::string grid = tmp.file("grid.csv"), life = tmp.file("life.csv");
  ASSERT_EQ(run_lumos("place " + fleet("two-servers.toml") +
                      " --sweep-grid-intensity 0:600:10 -o " + grid)
                .exit_code,
            0);
  const auto g = lines_of(grid);
  ASSERT_EQ(g.size(), 62u);
  EXPECT_EQ(g[0],
            "grid_g_per_kwh,embodied_share,osci_server,sci_server,added_sci,reference_sci_server,"
            "added_reference_pick");
  EXPECT_EQ(g[1].rfind("0,1,", 0), 0u) << g[1];
  const auto r = run_lumos("place " + fleet("two-servers.toml") + " --sweep-lifetime 3:12:1 -o " +
                           life + " --plot " + tmp.file("life.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + life), std::string::npos) << r.out;
  const auto l = lines_of(life);
  ASSERT_EQ(l.size(), 11u);
  EXPECT_EQ(l[0].rfind("lifetime_y,", 0), 0u);
  EXPECT_EQ(l[3].rfind("5,", 0), 0u);
  EXPECT_NE(l[3].find(",S_B,S_A,0.239"), std::string::npos) << "Table 2 at 5 years: " << l[3];
  EXPECT_TRUE(std::filesystem::exists(tmp.file("life.svg")));
}

TEST(PlaceSensitivityCli, TheCaseStudyModelIsNamedInTheOutput) {
  const std::string base = "place " + fleet("mit-740.toml") + " --utilization 0:1:0.5 --case-study";
  const auto paper = run_lumos(base + " --json");
  ASSERT_EQ(paper.exit_code, 0) << paper.out;
  EXPECT_NE(paper.out.find("\"footprint\":\"paper\""), std::string::npos);
  const auto marginal = run_lumos(base + " --case-study-model marginal --json");
  ASSERT_EQ(marginal.exit_code, 0) << marginal.out;
  EXPECT_NE(marginal.out.find("\"footprint\":\"marginal\""), std::string::npos);
  const auto fleet_model = run_lumos(base + " --case-study-model fleet --json");
  ASSERT_EQ(fleet_model.exit_code, 0) << fleet_model.out;
  EXPECT_NE(fleet_model.out.find("\"footprint\":\"fleet\""), std::string::npos);
}

TEST(PlaceSensitivityCli, BadSweepsAreOneLineAndWriteNothing) {
  TempDir tmp;
  const std::string out = tmp.file("s.csv"), two = fleet("two-servers.toml");
  const std::pair<std::string, std::string> cases[] = {
      {"place " + two + " --sweep-lifetime 0:12:1 -o " + out, "lifetimes must be positive"},
      {"place " + two + " --sweep-grid-intensity -5:10:1 -o " + out, "values lie in [0, 10000]"},
      {"place " + two + " --sweep-grid-intensity 0:10 -o " + out, "expected FROM:TO:STEP"},
      {"place " + two + " --sweep-grid-intensity 0:10:0 -o " + out, "STEP must be positive"},
      // A positive step that gives too many values says so, not that the step is not positive.
      {"place " + two + " --sweep-grid-intensity 0:10:1e-7 -o " + out,
       "1e+08 values from FROM to TO by STEP; at most 10,000"},
      {"place " + two + " --sweep-lifetime 3:12:1 --score-year", "give one of --jobs"},
      {"place " + fleet("mit-740.toml") +
           " --utilization 0:1:0.5 --case-study "
           "--case-study-model idle",
       "expected paper, marginal or fleet"},
  };
  for (const auto& [args, needle] : cases) {
    const auto r = run_lumos(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
