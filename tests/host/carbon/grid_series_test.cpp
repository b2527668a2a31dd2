#include "carbon/grid_series.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "support/test_util.hpp"

namespace lumos::carbon {
namespace {

using ::testing::HasSubstr;

std::string grid_dir() {
  return LUMOS_GRID_DIR;
}

// Every shared export (*.csv.gz), sorted; empty when the folder is missing.
std::vector<std::string> grid_files() {
  std::vector<std::string> out;
  namespace fs = std::filesystem;
  if (!fs::exists(grid_dir())) return out;
  for (const auto& e : fs::directory_iterator(grid_dir())) {
    const std::string p = e.path().string();
    if (p.size() > 7 && p.substr(p.size() - 7) == ".csv.gz") out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

#define REQUIRE_GRID()                                                 \
  do {                                                                 \
    if (grid_files().empty())                                          \
      GTEST_SKIP() << "shared grid series not found at " << grid_dir() \
                   << " (configure with -DLUMOS_GRID_DIR=...)";        \
  } while (0)

// "ES_2022_hourly.csv.gz" -> {"ES", 2022}.
std::pair<std::string, int> zone_and_year(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const size_t u = name.find('_');
  return {name.substr(0, u), std::stoi(name.substr(u + 1, 4))};
}

std::string error_of(const std::string& path, IntensityBasis basis = IntensityBasis::kLifecycle) {
  try {
    load_grid_series(path, basis);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

GridSeries hand_made(std::vector<double> values, int64_t step_s = 3600) {
  GridSeries s;
  s.path = "hand-made";
  s.start_unix_s = parse_utc("2022-06-01 00:00:00", "test");
  s.step_s = step_s;
  s.g_per_kwh = std::move(values);
  return s;
}

// The simplest correct search: every candidate's mean, computed on its own.
BestStart brute_force(const GridSeries& s, int64_t begin, int64_t end, double duration_s,
                      int64_t step_s) {
  BestStart b;
  b.start_unix_s = begin;
  b.first_mean_g_per_kwh = b.mean_g_per_kwh = b.worst_mean_g_per_kwh =
      mean_intensity(s, begin, duration_s);
  for (int64_t t = begin + step_s; t <= end; t += step_s) {
    const double m = mean_intensity(s, t, duration_s);
    if (m < b.mean_g_per_kwh) b = {t, m, b.worst_mean_g_per_kwh, b.first_mean_g_per_kwh};
    b.worst_mean_g_per_kwh = std::max(b.worst_mean_g_per_kwh, m);
  }
  return b;
}

void expect_same_best(const BestStart& got, const BestStart& want) {
  EXPECT_EQ(format_utc(got.start_unix_s), format_utc(want.start_unix_s));
  EXPECT_NEAR(got.mean_g_per_kwh, want.mean_g_per_kwh, 1e-9 * want.mean_g_per_kwh);
  EXPECT_NEAR(got.worst_mean_g_per_kwh, want.worst_mean_g_per_kwh,
              1e-9 * want.worst_mean_g_per_kwh);
  EXPECT_NEAR(got.first_mean_g_per_kwh, want.first_mean_g_per_kwh,
              1e-9 * want.first_mean_g_per_kwh);
}

TEST(GridSeries, ReadsEverySharedExportAsAFullHourlyYearOfItsZone) {
  REQUIRE_GRID();
  EXPECT_EQ(grid_files().size(), 8u);
  for (const std::string& path : grid_files()) {
    SCOPED_TRACE(path);
    const auto [zone, year] = zone_and_year(path);
    const GridSeries s = load_grid_series(path);
    EXPECT_EQ(s.g_per_kwh.size(), 8760u);
    EXPECT_EQ(s.step_s, 3600);
    EXPECT_EQ(format_utc(s.start_unix_s), std::to_string(year) + "-01-01 00:00:00");
    EXPECT_EQ(format_utc(s.end_unix_s()), std::to_string(year + 1) + "-01-01 00:00:00");
    EXPECT_EQ(s.zone, zone);
    EXPECT_TRUE(s.basis_known);
    EXPECT_EQ(s.basis, IntensityBasis::kLifecycle);
    EXPECT_EQ(s.path, path);
  }
}

TEST(GridSeries, ReadsAnElectricityMapsExportAndPicksTheBasisColumn) {
  REQUIRE_GRID();
  const std::string path = grid_dir() + "/ES_2022_hourly.csv.gz";
  const GridSeries lca = load_grid_series(path);
  const GridSeries direct = load_grid_series(path, IntensityBasis::kDirect);
  EXPECT_EQ(lca.g_per_kwh.front(), 175.54);
  EXPECT_EQ(lca.g_per_kwh.back(), 104.82);
  EXPECT_EQ(direct.g_per_kwh.front(), 133.64);
  EXPECT_EQ(direct.g_per_kwh.back(), 74.33);
  EXPECT_EQ(direct.basis, IntensityBasis::kDirect);
  EXPECT_TRUE(direct.basis_known);
  const GridSeries cal = load_grid_series(grid_dir() + "/US-CAL-CISO_2023_hourly.csv.gz");
  EXPECT_EQ(cal.zone, "US-CAL-CISO");
  EXPECT_EQ(cal.g_per_kwh.front(), 285.41);
}

TEST(GridSeries, AnnualMeanOfEveryExportLiesBetweenItsMinAndMax) {
  REQUIRE_GRID();
  for (const std::string& path : grid_files()) {
    SCOPED_TRACE(path);
    for (IntensityBasis basis : {IntensityBasis::kLifecycle, IntensityBasis::kDirect}) {
      const GridSeries s = load_grid_series(path, basis);
      const auto [lo, hi] = std::minmax_element(s.g_per_kwh.begin(), s.g_per_kwh.end());
      const double duration_s = static_cast<double>(s.end_unix_s() - s.start_unix_s);
      const double mean = mean_intensity(s, s.start_unix_s, duration_s);
      EXPECT_GE(mean, *lo);
      EXPECT_LE(mean, *hi);
      double sum = 0;
      for (double v : s.g_per_kwh) sum += v;
      EXPECT_NEAR(mean, sum / static_cast<double>(s.g_per_kwh.size()), 1e-9 * mean);
    }
  }
}

TEST(GridSeries, ReadsAGenericTwoColumnFileWithAHeaderAndIsoTimestamps) {
  testing::TempDir dir;
  const std::string path = dir.write("watttime.csv",
                                     "timestamp,gCO2eq/kWh\n"
                                     "2023-03-01T00:00Z,120.5\n"
                                     "2023-03-01T00:30:00+00:00,100\n"
                                     "2023-03-01T01:00,80.25\n");
  const GridSeries s = load_grid_series(path, IntensityBasis::kDirect);
  EXPECT_EQ(format_utc(s.start_unix_s), "2023-03-01 00:00:00");
  EXPECT_EQ(s.step_s, 1800);
  EXPECT_EQ(s.g_per_kwh, (std::vector<double>{120.5, 100, 80.25}));
  EXPECT_FALSE(s.basis_known);
  EXPECT_EQ(s.zone, "");
}

TEST(GridSeries, ReadsAGenericTwoColumnFileWithoutAHeaderInUnixSeconds) {
  testing::TempDir dir;
  const std::string path = dir.write("unix.csv",
                                     "1672531200,50\n"
                                     "1672534800,60\n"
                                     "1672538400,70\n\n\n");
  const GridSeries s = load_grid_series(path);
  EXPECT_EQ(format_utc(s.start_unix_s), "2023-01-01 00:00:00");
  EXPECT_EQ(s.step_s, 3600);
  EXPECT_EQ(s.g_per_kwh, (std::vector<double>{50, 60, 70}));
  EXPECT_FALSE(s.basis_known);
}

TEST(GridSeries, ReadsGzipWithCrlfBomQuotesAndAPlainTwoInTheHeader) {
  testing::TempDir dir;
  const std::string csv =
      "\xEF\xBB\xBF\"Datetime (UTC)\",Zone Id,Carbon Intensity gCO2eq/kWh (direct),"
      "Carbon Intensity gCO2eq/kWh (LCA)\r\n"
      "\"2024-02-28 23:00:00\",\"DE\",300,400\r\n"
      "2024-02-29 00:00:00,DE,310.5,410.5\r\n"
      "\r\n";
  const std::string path = dir.write("de.csv.gz", testing::gzip_string(csv));
  const GridSeries s = load_grid_series(path, IntensityBasis::kDirect);
  EXPECT_EQ(s.zone, "DE");
  EXPECT_EQ(s.g_per_kwh, (std::vector<double>{300, 310.5}));
  EXPECT_EQ(format_utc(s.start_unix_s), "2024-02-28 23:00:00");
  EXPECT_EQ(load_grid_series(path).g_per_kwh, (std::vector<double>{400, 410.5}));
}

struct BadInput {
  std::string name;
  std::string content;
  std::string line;    // "file:N:" expected in the message
  std::string detail;  // and this
  IntensityBasis basis = IntensityBasis::kLifecycle;
};

TEST(GridSeries, RejectsEveryBadInputWithItsLineAndWhatWasExpected) {
  const std::string em =
      "Datetime (UTC),Zone Id,Carbon Intensity gCO₂eq/kWh (LCA)\n"
      "2022-01-01 00:00:00,ES,100\n"
      "2022-01-01 01:00:00,ES,110\n";
  const std::vector<BadInput> cases = {
      {"gap", em + "2022-01-01 03:00:00,ES,100\n", ":4:",
       "expected 2022-01-01 02:00:00 (one step after the previous row; gaps are not filled)"},
      {"repeat", em + "2022-01-01 01:00:00,ES,100\n", ":4:", "strictly increase"},
      {"unsorted first step", "t,g\n2022-01-01 01:00:00,1\n2022-01-01 00:00:00,2\n",
       ":3:", "strictly increase"},
      {"negative", em + "2022-01-01 02:00:00,ES,-1\n", ":4:", "in [0, 10000] gCO2/kWh"},
      {"too large", em + "2022-01-01 02:00:00,ES,10001\n", ":4:", "in [0, 10000] gCO2/kWh"},
      {"nan", em + "2022-01-01 02:00:00,ES,nan\n", ":4:", "in [0, 10000] gCO2/kWh"},
      {"empty value", em + "2022-01-01 02:00:00,ES,\n",
       ":4:", "Carbon Intensity gCO₂eq/kWh (LCA) is empty"},
      {"not a number", "t,g\n2022-01-01 00:00:00,1\n2022-01-01 01:00:00,abc\n",
       ":3:", "expected a number"},
      {"one row", "t,g\n2022-01-01 00:00:00,1\n", ":2:", "expected at least 2"},
      {"header only", "t,g\n", ":1:", "expected at least 2"},
      {"empty file", "", ":1:", "expected at least 2"},
      {"unknown format", "a,b,c\n1,2,3\n", ":1:", "Datetime (UTC)"},
      {"missing basis column", em, ":1:", "Carbon Intensity gCO₂eq/kWh (direct)",
       IntensityBasis::kDirect},
      {"bad timestamp", em + "2022-01-01 02h,ES,1\n", ":4:", "YYYY-MM-DD HH:MM:SS"},
      {"impossible date", "t,g\n2023-02-29 00:00:00,1\n2023-03-01 00:00:00,1\n",
       ":2:", "valid UTC date"},
      {"offset", "t,g\n2022-01-01T00:00:00+02:00,1\n", ":2:", "expected UTC"},
      {"zone change", em + "2022-01-01 02:00:00,PT,1\n", ":4:", "one zone per file"},
      {"too few cells", em + "2022-01-01 02:00:00,ES\n", ":4:", "expected at least 3"},
      {"quoted comma", em + "\"2022-01-01 02:00:00\",\"E,S\",1\n", ":4:", "closing quote"},
  };
  testing::TempDir dir;
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.write("grid.csv", c.content);
    const std::string msg = error_of(path, c.basis);
    EXPECT_THAT(msg, HasSubstr(path + c.line));
    EXPECT_THAT(msg, HasSubstr(c.detail));
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(GridSeries, MeanIntensityWeighsPartialRowsExactly) {
  const GridSeries s = hand_made({100, 200, 400, 50});
  const int64_t t0 = s.start_unix_s;
  // Half of row 0, all of row 1, half of row 2: (1800*100 + 3600*200 + 1800*400) / 7200.
  EXPECT_DOUBLE_EQ(mean_intensity(s, t0 + 1800, 7200), 225.0);
  // 600 s of row 0 and 600.5 s of row 1.
  EXPECT_DOUBLE_EQ(mean_intensity(s, t0 + 3000, 1200.5), (600 * 100 + 600.5 * 200) / 1200.5);
  EXPECT_DOUBLE_EQ(mean_intensity(s, t0 + 3700, 100), 200.0);
  EXPECT_DOUBLE_EQ(mean_intensity(s, t0, 4 * 3600), 187.5);
  EXPECT_DOUBLE_EQ(mean_intensity(s, t0 + 7200, 0), 400.0);
  EXPECT_DOUBLE_EQ(mean_intensity(s, t0 + 4 * 3600 - 1, 0), 50.0);
}

TEST(GridSeries, MeanIntensityRejectsWindowsOutsideTheSeriesGivingItsSpan) {
  const GridSeries s = hand_made({100, 200});
  const int64_t t0 = s.start_unix_s;
  for (const auto& [start, duration] : std::vector<std::pair<int64_t, double>>{
           {t0 - 1, 10}, {t0 + 3600, 3601}, {t0 + 7200, 0}, {t0, -1}, {t0, NAN}}) {
    SCOPED_TRACE(std::to_string(start - t0) + " + " + std::to_string(duration));
    try {
      mean_intensity(s, start, duration);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      if (duration >= 0)
        EXPECT_THAT(msg, HasSubstr("2022-06-01 00:00:00 to 2022-06-01 02:00:00 UTC"));
      else
        EXPECT_THAT(msg, HasSubstr("expected >= 0"));
    }
  }
}

TEST(GridSeries, BestStartMatchesABruteForceScanOnARealSeries) {
  REQUIRE_GRID();
  const GridSeries s = load_grid_series(grid_dir() + "/ES_2023_hourly.csv.gz");
  const int64_t begin = parse_utc("2023-03-01 00:00:00", "begin");
  const int64_t end = begin + 14 * 86400;
  const double job_s = 48 * 3600;
  const BestStart got = best_start(s, begin, end, job_s);
  expect_same_best(got, brute_force(s, begin, end, job_s, 3600));
  EXPECT_LT(got.mean_g_per_kwh, got.first_mean_g_per_kwh);
  EXPECT_NEAR(got.mean_g_per_kwh, mean_intensity(s, got.start_unix_s, job_s),
              1e-9 * got.mean_g_per_kwh);
}

TEST(GridSeries, BestStartMatchesBruteForceOffTheHourAndForPartialHours) {
  REQUIRE_GRID();
  const GridSeries s = load_grid_series(grid_dir() + "/US-CAL-CISO_2022_hourly.csv.gz");
  const int64_t begin = parse_utc("2022-07-04T10:20:00Z", "begin");
  const int64_t end = begin + 3 * 86400;
  for (double job_s : {0.0, 1000.0, 5400.5, 30 * 3600.0}) {
    for (int64_t step_s : {int64_t{900}, int64_t{3600}, int64_t{7000}}) {
      SCOPED_TRACE(std::to_string(job_s) + " s job, step " + std::to_string(step_s));
      // Equal windows inside one row are common here, so compare means, not which tie won.
      const BestStart got = best_start(s, begin, end, job_s, step_s);
      const BestStart want = brute_force(s, begin, end, job_s, step_s);
      EXPECT_EQ((got.start_unix_s - begin) % step_s, 0);
      EXPECT_NEAR(mean_intensity(s, got.start_unix_s, job_s), want.mean_g_per_kwh,
                  1e-9 * want.mean_g_per_kwh);
      EXPECT_NEAR(got.mean_g_per_kwh, want.mean_g_per_kwh, 1e-9 * want.mean_g_per_kwh);
      EXPECT_NEAR(got.worst_mean_g_per_kwh, want.worst_mean_g_per_kwh,
                  1e-9 * want.worst_mean_g_per_kwh);
    }
  }
}

TEST(GridSeries, BestStartIsNeverWorseThanStartingAtTheWindowBegin) {
  REQUIRE_GRID();
  for (const std::string& path : grid_files()) {
    SCOPED_TRACE(path);
    const GridSeries s = load_grid_series(path);
    for (int week = 0; week < 50; week += 7) {
      const int64_t begin = s.start_unix_s + week * 7 * 86400 + 5 * 3600;
      const BestStart b = best_start(s, begin, begin + 2 * 86400, 8.5 * 3600);
      EXPECT_LE(b.mean_g_per_kwh, b.first_mean_g_per_kwh);
      EXPECT_LE(b.first_mean_g_per_kwh, b.worst_mean_g_per_kwh);
      const double at_begin = mean_intensity(s, begin, 8.5 * 3600);
      EXPECT_NEAR(b.first_mean_g_per_kwh, at_begin, 1e-9 * at_begin);
      EXPECT_LE(b.mean_g_per_kwh, at_begin * (1 + 1e-12));
      EXPECT_GE(b.start_unix_s, begin);
      EXPECT_LE(b.start_unix_s, begin + 2 * 86400);
    }
  }
}

TEST(GridSeries, BestStartScansAYearLongWindowOnARealSeries) {
  REQUIRE_GRID();
  const GridSeries s = load_grid_series(grid_dir() + "/NO_2022_hourly.csv.gz");
  const double job_s = 24 * 3600;
  const int64_t end = s.end_unix_s() - static_cast<int64_t>(job_s);
  expect_same_best(best_start(s, s.start_unix_s, end, job_s),
                   brute_force(s, s.start_unix_s, end, job_s, 3600));
}

TEST(GridSeries, BestStartPrefersTheEarliestOfEqualStarts) {
  const GridSeries flat = hand_made({7, 7, 7, 7, 7});
  EXPECT_EQ(
      best_start(flat, flat.start_unix_s + 3600, flat.start_unix_s + 3 * 3600, 3600).start_unix_s,
      flat.start_unix_s + 3600);
  const GridSeries s = hand_made({5, 1, 5, 1, 5});
  const BestStart b = best_start(s, s.start_unix_s, s.start_unix_s + 4 * 3600, 3600);
  EXPECT_EQ(b.start_unix_s, s.start_unix_s + 3600);
  EXPECT_EQ(b.mean_g_per_kwh, 1);
  EXPECT_EQ(b.worst_mean_g_per_kwh, 5);
  EXPECT_EQ(b.first_mean_g_per_kwh, 5);
}

TEST(GridSeries, BestStartRejectsJobsThatWouldEndAfterTheSeries) {
  const GridSeries s = hand_made({5, 1, 5});
  EXPECT_THROW(best_start(s, s.start_unix_s, s.start_unix_s + 2 * 3600, 3600.5), InputError);
  EXPECT_THROW(best_start(s, s.start_unix_s - 3600, s.start_unix_s, 3600), InputError);
  EXPECT_THROW(best_start(s, s.start_unix_s + 3600, s.start_unix_s, 3600), InputError);
  EXPECT_THROW(best_start(s, s.start_unix_s, s.start_unix_s, 3600, -5), InputError);
  EXPECT_NO_THROW(best_start(s, s.start_unix_s, s.start_unix_s + 2 * 3600, 3600));
}

TEST(GridSeries, ParseAndFormatUtcRoundTripThroughLeapDaysAndYearBoundaries) {
  EXPECT_EQ(parse_utc("1970-01-01 00:00:00", "t"), 0);
  EXPECT_EQ(format_utc(-1), "1969-12-31 23:59:59");
  EXPECT_EQ(parse_utc("2024-02-29 12:34:56", "t"), 1709210096);
  EXPECT_EQ(format_utc(1709210096), "2024-02-29 12:34:56");
  EXPECT_EQ(format_utc(parse_utc("2023-12-31T23:59:59Z", "t") + 1), "2024-01-01 00:00:00");
  EXPECT_EQ(parse_utc("2022-03-01T14:00", "t"), parse_utc("2022-03-01 14:00:00+00:00", "t"));
  EXPECT_EQ(format_utc(parse_utc("1646143200", "t")), "2022-03-01 14:00:00");
  EXPECT_EQ(format_utc(parse_utc("2000-02-29 00:00:00", "t") + 86400), "2000-03-01 00:00:00");
  for (const char* bad : {"2100-02-29 00:00:00", "2023-02-29 00:00:00", "2022-13-01 00:00:00",
                          "2022-01-01 24:00:00", "2022-02-30", "yesterday"}) {
    SCOPED_TRACE(bad);
    try {
      parse_utc(bad, "--start");
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_THAT(std::string(e.what()), HasSubstr(std::string("--start: ") + bad));
    }
  }
  try {
    parse_utc("2022-01-01T00:00:00-05:00", "--start");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("expected UTC"));
  }
  // Every day from 1999 to 2031 round-trips and is 86,400 s after the one before.
  int64_t t = parse_utc("1999-01-01 06:07:08", "t");
  for (int day = 0; day < 33 * 366; ++day, t += 86400) {
    ASSERT_EQ(parse_utc(format_utc(t), "t"), t) << format_utc(t);
    ASSERT_EQ(parse_utc(std::to_string(t), "t"), t);
  }
}

}  // namespace
}  // namespace lumos::carbon
