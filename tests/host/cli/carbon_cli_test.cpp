// `lumos carbon` through the command: one configuration's energy by part and its operational
// carbon on a region or on a real hourly series (with the best start in a window), embodied
// carbon beside it, and bad input as one line with exit code 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;

const std::string kRun = "carbon --model gpt3-15b --layers 8 --tp 2 --pp 2 --dp 2 --gbs 16 ";

double field(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  EXPECT_NE(at, std::string::npos) << key << " in " << json;
  return at == std::string::npos ? 0 : std::stod(json.substr(at + key.size() + 3));
}

// The run's energy, checked to be the sum of its parts.
double energy_of_parts(const std::string& json) {
  const double total = field(json, "energy_kwh");
  EXPECT_NEAR(total,
              field(json, "gpu_energy_kwh") + field(json, "node_energy_kwh") +
                  field(json, "facility_energy_kwh"),
              1e-9 * total);
  return total;
}

TEST(CarbonCli, EnergyIsTheSumOfItsPartsAndCarbonIsEnergyTimesTheRegion) {
  const auto r = run_lumos(kRun + "--tokens 1e9 --region pl --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const double total = energy_of_parts(r.out);
  EXPECT_EQ(field(r.out, "grid_g_per_kwh"), 581);
  EXPECT_NEAR(field(r.out, "operational_kg"), total * 581 / 1000, 1e-9 * total);
  EXPECT_NEAR(field(r.out, "sci_kg"), field(r.out, "operational_kg") + field(r.out, "embodied_kg"),
              1e-9 * total);
  // Half the tokens, half of everything.
  const auto half = run_lumos(kRun + "--tokens 5e8 --region pl --json");
  ASSERT_EQ(half.exit_code, 0) << half.out;
  EXPECT_NEAR(field(half.out, "energy_kwh") * 2, total, 1e-9 * total);
}

// From a trace (the embedded demo): its replayed steps' energy, scaled to the run's steps.
TEST(CarbonCli, ATraceIsAccountedForFromItsReplayedSteps) {
  const auto r = run_lumos("carbon --trace '' --region de --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(field(r.out, "steps"), 3);
  EXPECT_EQ(field(r.out, "gpus"), 1);
  const double total = energy_of_parts(r.out);
  EXPECT_GT(field(r.out, "gpu_compute_bound"), 0);
  const auto run = run_lumos("carbon --trace '' --region de --steps 300 --gpus 8 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NEAR(field(run.out, "energy_kwh"), total * 100 * 8, 1e-6 * total * 800);
  // What-ifs: the job moved onto a faster GPU, or its compute twice as fast, runs shorter.
  for (const std::string whatif : {"--on-gpu b200", "--speed compute=2"}) {
    const auto w = run_lumos("carbon --trace '' --region de --json " + whatif);
    ASSERT_EQ(w.exit_code, 0) << w.out;
    EXPECT_LT(field(w.out, "hours"), field(r.out, "hours")) << whatif;
    EXPECT_LT(field(w.out, "gpu_compute_bound"), field(r.out, "gpu_compute_bound")) << whatif;
  }
}

// lumos whatif prices each variant's GPU energy with the same model: idle power over the step
// plus the kernels' draw, between idle and TDP over the step, and the same as lumos carbon for
// the traced GPU.
TEST(CarbonCli, WhatifEnergyLiesBetweenIdleAndTdpAndMatchesCarbon) {
  const auto r = run_lumos("whatif --gpus h100,b200 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::pair<std::string, std::pair<double, double>> gpus[] = {{"h100", {80, 700}},
                                                                    {"b200", {100, 1000}}};
  for (const auto& [gpu, watts] : gpus) {
    const size_t at = r.out.find("\"label\":\"" + gpu + "\"");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string v = r.out.substr(at);
    const double s = field(v, "replayed_us") * 1e-6, e = field(v, "energy_j");
    EXPECT_GT(e, watts.first * s) << gpu;
    EXPECT_LT(e, watts.second * s) << gpu;
  }
  // The traced GPU: lumos carbon's GPU energy of the traced steps, whatif's of one of them (same
  // trace, same model).
  const auto c = run_lumos("carbon --trace '' --json");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  const double carbon_gpu_j = field(c.out, "gpu_energy_kwh") * 3.6e6;
  const std::string h100 = r.out.substr(r.out.find("\"label\":\"h100\""));
  const double whatif_j = field(h100, "energy_j") * field(c.out, "steps");
  EXPECT_NEAR(whatif_j, carbon_gpu_j, 0.05 * carbon_gpu_j);
  // Its step is the one lumos carbon (and lumos replay) replays: the demo is one rank whose steps
  // do not overlap (where they do, carbon takes the windows cut at the next step's start).
  EXPECT_NEAR(field(h100, "replayed_us") * 1e-6, field(c.out, "step_time_s"), 1e-9);
}

TEST(CarbonCli, AnHourlySeriesGivesTheMeanOverTheRunAndTheBestStart) {
  const std::string series = std::string(LUMOS_GRID_DIR) + "/ES_2023_hourly.csv.gz";
  if (!std::filesystem::exists(series)) GTEST_SKIP() << "shared grid series not found: " << series;
  const auto r = run_lumos(kRun + "--tokens 1e9 --grid-series " + series +
                           " --start 2023-06-01T00:00Z --window-end '2023-06-15 00:00:00' --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const double from_start = field(r.out, "grid_g_per_kwh");
  EXPECT_GT(from_start, 0);
  const size_t best = r.out.find("\"best_start\"");
  ASSERT_NE(best, std::string::npos) << r.out;
  const double best_mean = field(r.out.substr(best), "mean_g_per_kwh");
  EXPECT_LE(best_mean, from_start);
  EXPECT_GE(field(r.out.substr(best), "worst_mean_g_per_kwh"), from_start);
}

TEST(CarbonCli, BadInputGetsOneLine) {
  lumos::testing::TempDir tmp;
  const std::string gap =
      tmp.write("gap.csv",
                "timestamp,gCO2eq/kWh\n2023-01-01 00:00:00,100\n2023-01-01 01:00:00,120\n"
                "2023-01-01 03:00:00,90\n");
  const std::pair<std::string, std::string> cases[] = {
      {kRun + "--region atlantis", "unknown region 'atlantis'"},
      {kRun + "--grid-series " + gap, "gap.csv:4"},
      {kRun + "--region se --grid-series " + gap, "give --region or --grid-series, not both"},
      {kRun + "--start 2023-01-01T00:00Z", "--start and --window-end go with --grid-series"},
      {kRun + "--pue 0.5", "--pue: expected a PUE in [1, 5], got 0.5"},
      {kRun + "--tokens -1", "--tokens must be at least 1"},
      {kRun + "--steps 10", "--steps goes with --trace"},
      {"carbon --trace '' --tokens 1e9", "--tokens goes with an estimate"},
      {"carbon --trace '' --steps 0", "--gpus and --steps must be positive"},
      {"carbon --trace '' --on-gpu h200 --speed comm=2", "give --on-gpu or --speed, not both"},
      {"carbon --trace '' --on-gpu v100", "unknown GPU 'v100'"},
  };
  for (const auto& [args, needle] : cases) {
    const auto r = run_lumos(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}

}  // namespace

// A trace moved onto another GPU is priced as lumos whatif prices it (GEMMs by shape, attention
// at the GPU's matrix rate, memory-bound kernels at its HBM): onto the 500 W H100, whose capped
// clock slows matrix arithmetic, and onto an A100, both give the same step and GPU energy.
TEST(CarbonCli, OnAnotherGpuATraceIsPricedAsWhatifPricesIt) {
  lumos::testing::TempDir tmp;
  ASSERT_EQ(run_lumos("generate --model llama3-8b --layers 4 --tp 1 --pp 1 --dp 1 --gbs 2 --mbs 1 "
                      "--stack torchtitan -o " +
                      tmp.path())
                .exit_code,
            0);
  const std::string trace = tmp.path() + "/stage0.rank0.json";
  const auto w = run_lumos("whatif " + trace + " --gpus h100,h100-96gb-500w,a100 --json");
  ASSERT_EQ(w.exit_code, 0) << w.out;
  for (const std::string gpu : {"h100-96gb-500w", "a100"}) {
    const std::string v = w.out.substr(w.out.find("\"label\":\"" + gpu + "\""));
    const auto c = run_lumos("carbon --trace " + trace + " --on-gpu " + gpu + " --json");
    ASSERT_EQ(c.exit_code, 0) << c.out;
    const double step_us = field(c.out, "step_time_s") * 1e6;
    EXPECT_NEAR(step_us, field(v, "replayed_us"), 1e-6 * step_us) << gpu;
    EXPECT_GT(step_us, 1.3 * field(w.out, "replayed_us")) << gpu;  // the traced H100 first
    const double carbon_gpu_j = field(c.out, "gpu_energy_kwh") * 3.6e6;
    EXPECT_NEAR(field(v, "energy_j"), carbon_gpu_j, 1e-6 * carbon_gpu_j) << gpu;
  }
}
