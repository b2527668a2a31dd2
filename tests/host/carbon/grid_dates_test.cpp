// Times as a user gives and reads them: a date alone is accepted, and a run that does not fit
// the grid series is refused in hours and dates, saying what to change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "carbon/grid_series.hpp"
#include "common/error.hpp"

namespace lumos::carbon {
namespace {

using ::testing::HasSubstr;

// Four days of hourly rows from 2022-06-01.
GridSeries four_days() {
  GridSeries s;
  s.path = "hand-made";
  s.start_unix_s = 1654041600;  // 2022-06-01 00:00:00 UTC
  s.step_s = 3600;
  s.g_per_kwh.assign(96, 100.0);
  return s;
}

std::string error_of(const GridSeries& s, int64_t start, double duration_s) {
  try {
    mean_intensity(s, start, duration_s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(GridDates, ADateAloneIsItsMidnightUtc) {
  EXPECT_EQ(parse_utc("2022-06-01", "--start"), 1654041600);
  EXPECT_EQ(parse_utc("2024-02-29", "--start"), parse_utc("2024-02-29 00:00:00", "--start"));
  try {
    parse_utc("2023-02-29", "--start");
    ADD_FAILURE() << "2023 has no 29 February";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("or a date alone, YYYY-MM-DD"));
  }
}

TEST(GridDates, ARunPastTheSeriesEndSaysItsLengthInHoursAndTheLatestStart) {
  const GridSeries s = four_days();
  // 30 hours from 2022-06-04 00:00: the series ends at 2022-06-05 00:00.
  const std::string e = error_of(s, parse_utc("2022-06-04", "t"), 30 * 3600.0);
  EXPECT_THAT(e, HasSubstr("a run of 30 h from 2022-06-04 00:00:00 UTC"));
  EXPECT_THAT(e, HasSubstr("start at or before 2022-06-03 18:00:00 UTC"));
  EXPECT_EQ(e.find(" s:"), std::string::npos) << e;  // no duration in seconds
}

TEST(GridDates, ARunLongerThanTheSeriesAsksForALongerSeries) {
  const GridSeries s = four_days();
  const std::string e = error_of(s, s.start_unix_s, 10 * 24 * 3600.0);
  EXPECT_THAT(e, HasSubstr("a run of 240 h (10.0 days)"));
  EXPECT_THAT(e, HasSubstr("the run is longer than the series (96 h (4.0 days))"));
  EXPECT_THAT(e, HasSubstr("give a series that covers it"));
}

}  // namespace
}  // namespace lumos::carbon
