// `lumos place` through the command: the paper's tables, the utilization curve written to CSV,
// a sweep's training job on the GPU fleet example, and bad input as one line with exit code 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

std::string fleet(const std::string& name) {
  return std::string(LUMOS_EXAMPLES_DIR) + "/fleets/" + name;
}

// A variants CSV of GPT-3 15B (8 layers) on 64 GPUs of each of `gpus`, written into `tmp`.
std::string sweep_csv(const TempDir& tmp, const std::string& tp, const std::string& gpus) {
  const std::string out = tmp.file("v.csv");
  const auto s = run_lumos("sweep --model gpt3-15b --layers 8 --gpus 64 --gbs 512 --tp " + tp +
                           " --pp 1,2 --gpu " + gpus + " --tokens 100e9 --threads 2 -o " + out);
  EXPECT_EQ(s.exit_code, 0) << s.out;
  return out;
}

TEST(PlaceCli, ScoreYearPrintsTable2AndWhatSciCosts) {
  const auto r = run_lumos("place " + fleet("two-servers.toml") + " --score-year");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("SCI   picks S_A"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("oSCI  picks S_B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+23.93% over oSCI"), std::string::npos) << r.out;
}

TEST(PlaceCli, TheCaseStudyCurveIsWrittenForEachPolicy) {
  TempDir tmp;
  for (const std::string policy : {"years-in-service", "zero-after-lifetime"}) {
    const std::string out = tmp.file(policy + ".csv");
    const auto r =
        run_lumos("place " + fleet("mit-740.toml") +
                  " --utilization 0:1:0.1 --case-study --amortization " + policy + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::ifstream in(out);
    std::string header, line;
    std::getline(in, header);
    EXPECT_EQ(header.rfind("utilization,jobs,footprint_osci_kg,footprint_sci_kg", 0), 0u);
    int rows = 0;
    while (std::getline(in, line)) ++rows;
    EXPECT_EQ(rows, 11);
  }
  // The plot: two curves (SCI and tSCI over oSCI) of one point per level.
  const std::string svg = tmp.file("curve.svg");
  ASSERT_EQ(run_lumos("place " + fleet("mit-740.toml") +
                      " --utilization 0:1:0.25 --case-study --plot " + svg)
                .exit_code,
            0);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  size_t lines = 0;
  for (size_t at = text.find("<polyline"); at != std::string::npos;
       at = text.find("<polyline", at + 1)) {
    ++lines;
    const size_t from = text.find("points=\"", at) + 8, to = text.find('"', from);
    const std::string pts = text.substr(from, to - from);
    EXPECT_EQ(std::count(pts.begin(), pts.end(), ','), 5) << pts;
  }
  EXPECT_EQ(lines, 2u);
}

// On the GPU fleet, with old A100s written off (zero after their lifetime), SCI sends training
// jobs to them and the fleet emits more; oSCI keeps them on the efficient GPUs.
TEST(PlaceCli, SciPutsTrainingOnOldGpusAndTheFleetEmitsMore) {
  TempDir tmp;
  const std::string csv = sweep_csv(tmp, "1,2,4,8", "a100,h100,h200,b200");
  const auto r = run_lumos("place " + fleet("gpu-fleet.toml") + " --sweep " + csv +
                           " --copies 6 --amortization zero-after-lifetime --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const size_t sci = r.out.find("\"metric\":\"SCI\"");
  ASSERT_NE(sci, std::string::npos) << r.out;
  const std::string osci_part = r.out.substr(0, sci), sci_part = r.out.substr(sci);
  const auto a100_jobs = [](const std::string& part) {
    size_t n = 0;
    for (size_t at = part.find("A100 servers"); at != std::string::npos;
         at = part.find("A100 servers", at + 1))
      ++n;
    return n;
  };
  EXPECT_GT(a100_jobs(sci_part.substr(0, sci_part.find("\"metric\":\"tSCI\""))),
            a100_jobs(osci_part));
  const size_t added = sci_part.find("\"added_over_osci\":");
  ASSERT_NE(added, std::string::npos);
  EXPECT_GT(std::stod(sci_part.substr(added + 18)), 0.0) << r.out;
}

// A fleet whose gpu names match none of the CSV's feasible rows (a misspelling: gpu is free text,
// as a sweep run with --db may name GPUs of its own) is refused naming both sides.
TEST(PlaceCli, ASweepOnGpusTheFleetLacksNamesBothSides) {
  TempDir tmp;
  const auto r =
      run_lumos("place " + fleet("gpu-fleet.toml") + " --sweep " + sweep_csv(tmp, "4,8", "h800"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("a100, b200, h100, h200; the CSV's feasible rows: h800)"), std::string::npos)
      << r.out;
}

TEST(PlaceCli, BadInputGetsOneLineAndNoFile) {
  TempDir tmp;
  const std::string neg =
      tmp.write("neg.toml",
                "[[server]]\nname = \"x\"\ncount = 1\nresources = 8\nmax_w = 100\nidle_w = "
                "-3\nembodied_kg = 1\nage_y = 1\n");
  const std::string jobs =
      tmp.write("jobs.toml",
                "[[job]]\nname = \"big\"\n[[job.option]]\npool = \"S_A\"\nresources = 20\n"
                "hours = 5\n");
  const std::string long_job =
      tmp.write("long.toml", "[[job]]\nname = \"long\"\nscore = 10\nhours = 1e300\n");
  const std::string out = tmp.file("curve.csv");
  const std::pair<std::string, std::string> cases[] = {
      {"place " + neg + " --score-year --grid-intensity 10",
       "idle_w: expected a power in [0, 1000000] W, got -3"},
      {"place " + fleet("two-servers.toml") + " --jobs " + long_job,
       "long.toml:4: hours: expected a job's length in [1e-09, 1000000] hours, got 1e+300"},
      {"place " + fleet("two-servers.toml") + " --jobs " + jobs, "job big fits on no server type"},
      {"place " + fleet("two-servers.toml") + " --score-year --amortization forever",
       "expected linear, zero-after-lifetime or years-in-service"},
      {"place " + fleet("two-servers.toml"), "give one of --jobs"},
      {"place " + fleet("two-servers.toml") + " --utilization 0:2:0.1 --job-score 1 -o " + out,
       "values lie in [0, 1]"},
      {"place " + fleet("two-servers.toml") + " --utilization 0:1:0.1 -o " + out,
       "give --job-score S or --case-study"},
      {"place " + tmp.file("missing.toml") + " --score-year", "cannot open file"},
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
