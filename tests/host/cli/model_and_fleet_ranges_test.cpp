// `sweep` checks its model with the function `estimate` uses, and `place` and `carbon` take
// ages, lifetimes, power, PUE and grid intensity in the shared ranges of
// common/physical_ranges.hpp: each bad value is one line naming the field and the range, exit
// code 1. They used to give exit 0 with every sweep row "infeasible", or print inf, -nan% and
// 300-digit numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

void expect_one_line_exit_1(const std::string& args, const std::string& needle) {
  const auto r = run_lumos(args, 60);
  EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
}

const std::string kSweep = "sweep --model gpt3-15b --gpus 8 --tp 1,2 --pp 1 --gbs 8 --gpu h100 ";

std::string two_servers() {
  std::ifstream in(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/two-servers.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The example fleet with one line replaced.
std::string fleet_with(TempDir& tmp, const std::string& from, const std::string& to) {
  std::string text = two_servers();
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return tmp.write("fleet.toml", text);
}

}  // namespace

TEST(ModelChecks, SweepRefusesTheModelsEstimateRefuses) {
  TempDir tmp;
  const std::string out = " -o " + tmp.file("v.csv");
  expect_one_line_exit_1(kSweep + "--layers 0" + out, "layers must be positive (got 0)");
  expect_one_line_exit_1(kSweep + "--hidden 99999999999" + out,
                         "sizes above 16777216 are not supported");
  // The same messages as estimate's: the same function.
  const auto e = run_lumos("estimate --model gpt3-15b --layers 0");
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.out.find("layers must be positive (got 0)"), std::string::npos) << e.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("v.csv")));
}

TEST(ModelChecks, SweepRefusesABadModelInItsSpecFile) {
  TempDir tmp;
  const std::string axes = "\n[sweep]\ngpus = 8\ntp = \"1,2\"\npp = 1\ngbs = 8\ngpu = \"h100\"\n";
  const std::string zero =
      tmp.write("zero.toml", "[model]\npreset = \"gpt3-15b\"\nlayers = 0\n" + axes);
  expect_one_line_exit_1("sweep --spec " + zero, "layers must be positive (got 0)");
  const std::string huge = tmp.write(
      "huge.toml", "[model]\npreset = \"gpt3-15b\"\nhidden = 9223372036854775807\n" + axes);
  expect_one_line_exit_1("sweep --spec " + huge,
                         "sizes above 16777216 are not supported (got 9223372036854775807)");
  const std::string named =
      tmp.write("named.toml", "[model]\npreset = \"gpt3-15b\"\nname = \"a\\u0007b\"\n" + axes);
  expect_one_line_exit_1("sweep --spec " + named, "control characters are not allowed");
}

TEST(ModelChecks, SweepRefusesAModelFileNameWithAControlCharacter) {
  TempDir tmp;
  const std::string m = tmp.write("m.toml", "preset = \"gpt3-15b\"\nname = \"x\\u001by\"\n");
  expect_one_line_exit_1("sweep --gpus 8 --tp 1,2 --pp 1 --gbs 8 --gpu h100 --model-file " + m,
                         "control characters are not allowed");
}

TEST(PhysicalRanges, PlaceRefusesFleetValuesOutsideTheirRanges) {
  TempDir tmp;
  const std::string score_year = " --score-year";
  expect_one_line_exit_1("place " + fleet_with(tmp, "max_w = 95", "max_w = 1e308") + score_year,
                         "max_w: expected a power in [0, 1000000] W, got 1e+308");
  expect_one_line_exit_1(
      "place " + fleet_with(tmp, "grid_g_per_kwh = 13.9", "grid_g_per_kwh = 1e308") + score_year,
      "grid_g_per_kwh: expected a grid intensity in [0, 10000] gCO2/kWh");
  expect_one_line_exit_1("place " + fleet_with(tmp, "pue = 1.0", "pue = 1e308") + score_year,
                         "pue: expected a PUE in [1, 5], got 1e+308");
  expect_one_line_exit_1("place " + fleet_with(tmp, "year = 2019", "age_y = 1e300") + score_year,
                         "age_y: expected an age in [0, 100] years, got 1e+300");
  expect_one_line_exit_1(
      "place " + fleet_with(tmp, "reference_year = 2024", "reference_year = 1e300") + score_year,
      "expected an age in [0, 100] years");
  expect_one_line_exit_1(
      "place " + fleet_with(tmp, "lifetime_y = 5", "lifetime_y = 1e-300") + score_year,
      "lifetime_y: expected a lifetime in [0.1, 100] years");
  expect_one_line_exit_1(
      "place " + fleet_with(tmp, "embodied_kg = 8.04", "embodied_kg = 1e308") + score_year,
      "embodied_kg: expected an embodied carbon in [0, 1000000] kg");
}

TEST(PhysicalRanges, PlaceRefusesAGridIntensityOptionOutsideItsRange) {
  expect_one_line_exit_1("place " + std::string(LUMOS_EXAMPLES_DIR) +
                             "/fleets/two-servers.toml --score-year --grid-intensity 1e308",
                         "--grid-intensity: expected a grid intensity in [0, 10000] gCO2/kWh");
}

// Inputs inside their ranges that still give no number (a score so small that the per-score
// values overflow) are refused by the final check, naming the quantity.
TEST(PhysicalRanges, PlaceRefusesResultsThatAreNotFinite) {
  TempDir tmp;
  expect_one_line_exit_1(
      "place " + fleet_with(tmp, "score = 14020", "score = 1e-320") + " --score-year",
      "server S_A's gCO2 per score-year is not a finite number");
}

// The same ranges in every command that takes the quantity.
TEST(PhysicalRanges, CarbonAndSweepTakeThePueInTheSameRange) {
  expect_one_line_exit_1("carbon --model gpt3-15b --tp 8 --dp 4 --pue 1e308",
                         "--pue: expected a PUE in [1, 5], got 1e+308");
  expect_one_line_exit_1(kSweep + "--pue 0.5", "expected a PUE in [1, 5], got 0.5");
}
