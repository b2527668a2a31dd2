// Hourly (or any constant-step) grid carbon-intensity series, and when to start a job on it.
//
// Accepted files, plain or gzip (inflated by common::read_file_bytes):
//  (a) the Electricity Maps export: a header row with the columns `Datetime (UTC)` and
//      `Carbon Intensity gCO₂eq/kWh (LCA)` and/or `Carbon Intensity gCO₂eq/kWh (direct)` (also
//      spelled `gCO2eq`); the basis picks the column; `Zone Id`, when present, names the zone.
//  (b) a generic two-column file `timestamp,gCO2eq/kWh`, as other grid-data services export it,
//      with or without a header row (a header is a first row whose second cell is not a number).
//      Its basis is unknown (basis_known false).
// Timestamps are UTC: `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SS` or `YYYY-MM-DDTHH:MM`,
// optionally ending in `Z` or `+00:00`, or integer Unix seconds. CRLF line ends, a UTF-8 BOM,
// quoted cells (without embedded commas) and blank lines are accepted.
// Rows must be at least 2, values in [0, 10000] gCO2eq/kWh (common/physical_ranges.hpp), and
// timestamps must rise by one constant step (the first one): a gap is an error, not filled,
// because filling it would invent the very hours a job may be moved to.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lumos::carbon {

// "direct" counts combustion only; "LCA" the life cycle of the generation fleet. Results say which.
enum class IntensityBasis { kLifecycle, kDirect };

struct GridSeries {
  std::string path;
  std::string zone;  // Zone Id, or ""
  IntensityBasis basis = IntensityBasis::kLifecycle;
  bool basis_known = false;  // false for a plain two-column file
  int64_t start_unix_s = 0;
  int64_t step_s = 0;
  std::vector<double> g_per_kwh;  // row i holds for [start + i step, start + (i+1) step)

  int64_t end_unix_s() const {
    return start_unix_s + step_s * static_cast<int64_t>(g_per_kwh.size());
  }
};

// Throws InputError naming the file, the line, the field and what was expected.
GridSeries load_grid_series(const std::string& path,
                            IntensityBasis basis = IntensityBasis::kLifecycle);

// "2022-03-01 14:00:00" (UTC).
std::string format_utc(int64_t unix_s);

// The timestamp formats of load_grid_series, and a date alone (YYYY-MM-DD: its midnight, UTC),
// for options such as --start; `what` prefixes the InputError.
int64_t parse_utc(const std::string& text, const std::string& what);

// Time-weighted mean over [start, start + duration), each row holding for its step; partial
// rows count for the time they overlap. Duration 0: the value at start. Throws InputError when
// the window is not inside the series.
double mean_intensity(const GridSeries& s, int64_t start_unix_s, double duration_s);

struct BestStart {
  int64_t start_unix_s = 0;
  double mean_g_per_kwh = 0;
  double worst_mean_g_per_kwh = 0;
  double first_mean_g_per_kwh = 0;  // starting at the window's begin
};

// The start in [window_begin, window_end], on step_s boundaries from window_begin (step_s 0: the
// series' step), with the lowest mean intensity over the job: at constant power that is the
// lowest operational carbon. Ties go to the earliest start. O(rows + candidates). Throws
// InputError when a candidate's job would not end inside the series.
BestStart best_start(const GridSeries& s, int64_t window_begin_s, int64_t window_end_s,
                     double duration_s, int64_t step_s = 0);

inline double operational_gco2(double energy_kwh, double mean_g_per_kwh) {
  return energy_kwh * mean_g_per_kwh;
}

}  // namespace lumos::carbon
