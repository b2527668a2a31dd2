#include "carbon/grid_series.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string_view>

#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "common/physical_ranges.hpp"

namespace lumos::carbon {
namespace {

// A year of hourly rows is ~1 MB; this only stops a wrong file from filling memory.
constexpr uint64_t kMaxGridFileBytes = uint64_t{256} << 20;
// 0000-01-01 and 9999-12-31 23:59:59: four-digit years, and step arithmetic cannot overflow.
constexpr int64_t kMinUnixS = -62167219200;
constexpr int64_t kMaxUnixS = 253402300799;

constexpr const char* kTimestampFormats =
    "YYYY-MM-DD HH:MM:SS, YYYY-MM-DDTHH:MM[:SS] (optionally ending in Z or +00:00) or Unix "
    "seconds";
constexpr const char* kExpectedHeaders =
    "an Electricity Maps export (columns `Datetime (UTC)` and `Carbon Intensity gCO₂eq/kWh (LCA)` "
    "or `(direct)`) or two columns `timestamp,gCO2eq/kWh`";

// Howard Hinnant's days_from_civil: exact for the proleptic Gregorian calendar.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t y;
  int m, d;
};

Civil civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (m <= 2), m, d};
}

int days_in_month(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<int> digits(std::string_view s, size_t pos, size_t n) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

bool is_integer(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Unix seconds, or nullopt with `why` saying what is wrong (without the text itself).
std::optional<int64_t> parse_timestamp(std::string_view s, std::string& why) {
  s = trim(s);
  if (is_integer(s)) {
    int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || v < kMinUnixS || v > kMaxUnixS) {
      why = "expected Unix seconds of a four-digit year";
      return std::nullopt;
    }
    return v;
  }
  const auto y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  const auto h = digits(s, 11, 2), mi = digits(s, 14, 2);
  const bool shape = y && mo && d && h && mi && s[4] == '-' && s[7] == '-' &&
                     (s[10] == ' ' || s[10] == 'T') && s[13] == ':';
  if (!shape) {
    why = std::string("expected ") + kTimestampFormats;
    return std::nullopt;
  }
  size_t pos = 16;
  int sec = 0;
  if (pos < s.size() && s[pos] == ':') {
    const auto ss = digits(s, pos + 1, 2);
    if (!ss) {
      why = std::string("expected ") + kTimestampFormats;
      return std::nullopt;
    }
    sec = *ss;
    pos += 3;
  }
  const std::string_view zone = s.substr(pos);
  if (!zone.empty() && zone != "Z" && zone != "+00:00") {
    why = zone.front() == '+' || zone.front() == '-'
              ? "offset " + std::string(zone) + ": expected UTC (Z, +00:00 or no offset)"
              : std::string("expected ") + kTimestampFormats;
    return std::nullopt;
  }
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo) || *h > 23 || *mi > 59 ||
      sec > 59) {
    why = "expected a valid UTC date and time";
    return std::nullopt;
  }
  return days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + sec;
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// "path:line: " — the start of every message about a file's content.
std::string at(const std::string& path, size_t line) {
  return path + ":" + std::to_string(line) + ": ";
}

// Cells of one line: trimmed, one pair of surrounding quotes removed. A quoted cell with an
// embedded comma would shift every later column, so it is refused rather than misread.
std::vector<std::string_view> split_cells(std::string_view line, const std::string& path,
                                          size_t line_no) {
  std::vector<std::string_view> cells;
  size_t begin = 0;
  while (true) {
    const size_t comma = line.find(',', begin);
    std::string_view cell =
        trim(line.substr(begin, comma == line.npos ? line.npos : comma - begin));
    const bool opens = !cell.empty() && cell.front() == '"';
    LUMOS_EXPECT(!opens || (cell.size() >= 2 && cell.back() == '"'),
                 at(path, line_no) + "cell " + std::string(cell) +
                     ": expected a closing quote (quoted cells with commas are not supported)");
    if (opens) cell = cell.substr(1, cell.size() - 2);
    cells.push_back(cell);
    if (comma == line.npos) return cells;
    begin = comma + 1;
  }
}

// "gCO₂eq" and "gCO2eq" name the same column.
std::string normalise_header(std::string_view cell) {
  constexpr std::string_view kSubscript2 = "₂";
  std::string out;
  for (size_t i = 0; i < cell.size(); ++i) {
    if (cell.substr(i, kSubscript2.size()) == kSubscript2) {
      out += '2';
      i += kSubscript2.size() - 1;
    } else {
      out += cell[i];
    }
  }
  return out;
}

// Where the fields of a row are, and how to name them in messages.
struct Layout {
  size_t time_col = 0;
  size_t value_col = 1;
  std::optional<size_t> zone_col;
  std::string value_name = "gCO2eq/kWh (column 2)";
  bool basis_known = false;
  bool header = false;
};

constexpr const char* kDatetimeHeader = "Datetime (UTC)";

std::string intensity_header(IntensityBasis basis) {
  return basis == IntensityBasis::kDirect ? "Carbon Intensity gCO₂eq/kWh (direct)"
                                          : "Carbon Intensity gCO₂eq/kWh (LCA)";
}

std::optional<size_t> find_column(const std::vector<std::string_view>& cells,
                                  const std::string& name) {
  const std::string want = normalise_header(name);
  for (size_t i = 0; i < cells.size(); ++i)
    if (normalise_header(cells[i]) == want) return i;
  return std::nullopt;
}

Layout electricity_maps_layout(const std::vector<std::string_view>& header, IntensityBasis basis,
                               const std::string& path, size_t line_no) {
  Layout l;
  l.header = true;
  l.basis_known = true;
  l.value_name = intensity_header(basis);
  const auto time_col = find_column(header, kDatetimeHeader);
  const auto value_col = find_column(header, l.value_name);
  LUMOS_EXPECT(time_col, at(path, line_no) + "header: expected a column `" + kDatetimeHeader +
                             "` (Electricity Maps export) or " + kExpectedHeaders);
  LUMOS_EXPECT(value_col, at(path, line_no) + "header: expected a column `" + l.value_name +
                              "` for the " + (basis == IntensityBasis::kDirect ? "direct" : "LCA") +
                              " basis (Electricity Maps export)");
  l.time_col = *time_col;
  l.value_col = *value_col;
  l.zone_col = find_column(header, "Zone Id");
  return l;
}

// Decides the format from the first non-blank line.
Layout detect_layout(const std::vector<std::string_view>& first, IntensityBasis basis,
                     const std::string& path, size_t line_no) {
  if (find_column(first, kDatetimeHeader) ||
      find_column(first, intensity_header(IntensityBasis::kLifecycle)) ||
      find_column(first, intensity_header(IntensityBasis::kDirect)))
    return electricity_maps_layout(first, basis, path, line_no);
  LUMOS_EXPECT(first.size() == 2, at(path, line_no) + "unknown grid series format (" +
                                      std::to_string(first.size()) + " columns): expected " +
                                      kExpectedHeaders);
  Layout l;
  l.header = !parse_number(first[1]).has_value();
  if (l.header && !first[1].empty()) l.value_name = std::string(first[1]);
  return l;
}

class SeriesBuilder {
 public:
  SeriesBuilder(GridSeries& s, const Layout& l) : s_(s), l_(l) {}

  void add_row(const std::vector<std::string_view>& cells, size_t line_no) {
    const size_t need = std::max({l_.time_col, l_.value_col, l_.zone_col.value_or(0)}) + 1;
    LUMOS_EXPECT(cells.size() >= need, at(s_.path, line_no) + std::to_string(cells.size()) +
                                           " cells: expected at least " + std::to_string(need));
    check_zone(cells, line_no);
    const int64_t t = timestamp(cells[l_.time_col], line_no);
    check_step(cells[l_.time_col], t, line_no);
    s_.g_per_kwh.push_back(value(cells[l_.value_col], line_no));
    prev_ = t;
  }

  void finish(size_t last_line) {
    LUMOS_EXPECT(s_.g_per_kwh.size() >= 2,
                 at(s_.path, last_line) + std::to_string(s_.g_per_kwh.size()) +
                     " data rows: expected at least 2 (the step is the first interval)");
  }

 private:
  void check_zone(const std::vector<std::string_view>& cells, size_t line_no) {
    if (!l_.zone_col) return;
    const std::string_view zone = cells[*l_.zone_col];
    if (s_.g_per_kwh.empty()) s_.zone = std::string(zone);
    LUMOS_EXPECT(zone == s_.zone, at(s_.path, line_no) + "Zone Id " + std::string(zone) +
                                      ": expected " + s_.zone + " (one zone per file)");
  }

  int64_t timestamp(std::string_view cell, size_t line_no) const {
    std::string why;
    const auto t = parse_timestamp(cell, why);
    LUMOS_EXPECT(t, at(s_.path, line_no) + "timestamp " + std::string(cell) + ": " + why);
    return *t;
  }

  void check_step(std::string_view cell, int64_t t, size_t line_no) {
    const size_t n = s_.g_per_kwh.size();
    if (n == 0) {
      s_.start_unix_s = t;
      return;
    }
    if (n == 1) {
      LUMOS_EXPECT(t > prev_, at(s_.path, line_no) + "timestamp " + std::string(cell) +
                                  ": expected a time after " + format_utc(prev_) +
                                  " (timestamps must strictly increase)");
      s_.step_s = t - prev_;
      return;
    }
    const int64_t expected = prev_ + s_.step_s;
    LUMOS_EXPECT(t == expected, at(s_.path, line_no) + "timestamp " + std::string(cell) +
                                    ": expected " + format_utc(expected) +
                                    (t <= prev_ ? " (timestamps must strictly increase)"
                                                : " (one step after the previous row; gaps are "
                                                  "not filled)"));
  }

  double value(std::string_view cell, size_t line_no) const {
    const std::string where = at(s_.path, line_no) + l_.value_name;
    LUMOS_EXPECT(!cell.empty(), where + " is empty: expected a number in gCO2eq/kWh");
    const auto v = parse_number(cell);
    LUMOS_EXPECT(v, where + " " + std::string(cell) + ": expected a number in gCO2eq/kWh");
    // Several times the dirtiest grid at most: larger is a unit error.
    LUMOS_EXPECT(in_range(kGridIntensityRange, *v), where + " " + std::string(cell) +
                                                        ": expected a value in " +
                                                        range_text(kGridIntensityRange));
    return *v;
  }

  GridSeries& s_;
  const Layout& l_;
  int64_t prev_ = 0;
};

std::string span_utc(const GridSeries& s) {
  return s.path + " covers " + format_utc(s.start_unix_s) + " to " + format_utc(s.end_unix_s()) +
         " UTC";
}

// "3600 s", "5400.5 s": durations as people write them.
std::string seconds(double duration_s) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g s", duration_s);
  return buf;
}

// "36 h", "2,000 h (83.3 days)": a run's length as its user plans it, in hours and days.
std::string hours(double duration_s) {
  const double h = duration_s / 3600.0;
  char buf[96];
  if (h < 48)
    std::snprintf(buf, sizeof(buf), "%.3g h", h);
  else
    std::snprintf(buf, sizeof(buf), "%.0f h (%.1f days)", h, h / 24.0);
  return buf;
}

std::string describe_window(int64_t start_unix_s, double duration_s) {
  return "a run of " + hours(duration_s) + " from " + format_utc(start_unix_s) + " UTC";
}

// What to change when a run does not fit in the series: an earlier start, or a longer series.
std::string window_advice(const GridSeries& s, double duration_s) {
  const double series_s = static_cast<double>(s.end_unix_s() - s.start_unix_s);
  if (duration_s > series_s)
    return "; the run is longer than the series (" + hours(series_s) +
           "): give a series that covers it, or fewer steps";
  const auto latest = s.end_unix_s() - static_cast<int64_t>(std::ceil(duration_s));
  return "; start at or before " + format_utc(latest) + " UTC (--start, --window-end), or give a " +
         "series that runs longer";
}

// Hand-made series reach here too, not only loaded ones.
void expect_usable(const GridSeries& s, const std::string& what) {
  LUMOS_EXPECT(s.step_s > 0 && !s.g_per_kwh.empty(),
               what + ": grid series " + s.path + ": expected a step > 0 and at least one row");
}

void expect_duration(double duration_s, const std::string& what) {
  LUMOS_EXPECT(std::isfinite(duration_s) && duration_s >= 0,
               what + ": duration " + seconds(duration_s) + ": expected >= 0");
}

double value_at(const GridSeries& s, int64_t t) {
  return s.g_per_kwh[static_cast<size_t>((t - s.start_unix_s) / s.step_s)];
}

// Integral of intensity × time over [a, b) seconds after the series' start, from prefix sums of
// the rows (in row units, so they stay small). The partial rows at both ends are weighted
// directly, so a window inside one row gives that row's value exactly, as mean_intensity does,
// and equal windows tie exactly.
class WindowIntegral {
 public:
  explicit WindowIntegral(const GridSeries& s) : s_(s), sums_(s.g_per_kwh.size() + 1, 0.0) {
    for (size_t i = 0; i < s.g_per_kwh.size(); ++i) sums_[i + 1] = sums_[i] + s.g_per_kwh[i];
  }
  double operator()(double a, double b) const {
    const double step = static_cast<double>(s_.step_s);
    const size_t ka = row(a), kb = row(b);
    const auto& g = s_.g_per_kwh;
    if (ka == kb) return g[ka] * (b - a);
    return g[ka] * (static_cast<double>(ka + 1) * step - a) + (sums_[kb] - sums_[ka + 1]) * step +
           g[kb] * (b - static_cast<double>(kb) * step);
  }

 private:
  // The row holding offset x; the series' end belongs to the last row.
  size_t row(double x) const {
    const auto k = static_cast<size_t>(std::max(0.0, x / static_cast<double>(s_.step_s)));
    return std::min(s_.g_per_kwh.size() - 1, k);
  }

  const GridSeries& s_;
  std::vector<double> sums_;
};

}  // namespace

GridSeries load_grid_series(const std::string& path, IntensityBasis basis) {
  // One byte of padding keeps the buffer non-null for an empty file (memset of a null pointer
  // is undefined even for zero bytes, and the sanitizer build reports it).
  const common::FileBytes bytes = common::read_file_bytes(
      path, 1, kMaxGridFileBytes, "a grid series (a year of hours is ~1 MB)", {},
      "an hourly grid series (CSV, plain or gzip)");
  std::string_view text(bytes.data.data(), bytes.size);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

  GridSeries s;
  s.path = path;
  s.basis = basis;
  std::optional<Layout> layout;
  std::optional<SeriesBuilder> rows;
  size_t line_no = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t nl = std::min(text.find('\n', begin), text.size());
    const std::string_view line = trim(text.substr(begin, nl - begin));
    begin = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    const auto cells = split_cells(line, path, line_no);
    if (!layout) {
      layout = detect_layout(cells, basis, path, line_no);
      s.basis_known = layout->basis_known;
      rows.emplace(s, *layout);
      if (layout->header) continue;
    }
    rows->add_row(cells, line_no);
  }
  LUMOS_EXPECT(rows, at(path, std::max<size_t>(line_no, 1)) +
                         "no rows: expected at least 2 data rows of " + kExpectedHeaders);
  rows->finish(line_no);
  return s;
}

std::string format_utc(int64_t unix_s) {
  const int64_t days = (unix_s >= 0 ? unix_s : unix_s - 86399) / 86400;
  const int64_t sod = unix_s - days * 86400;
  const Civil c = civil_from_days(days);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02d %02d:%02d:%02d", static_cast<long long>(c.y),
                c.m, c.d, static_cast<int>(sod / 3600), static_cast<int>(sod / 60 % 60),
                static_cast<int>(sod % 60));
  return buf;
}

int64_t parse_utc(const std::string& text, const std::string& what) {
  std::string why;
  // A date alone is its midnight (UTC): "--start 2024-03-01".
  const bool date_only = text.size() == 10 && text[4] == '-' && text[7] == '-';
  const auto t = parse_timestamp(date_only ? text + " 00:00" : text, why);
  LUMOS_EXPECT(t, what + ": " + text + ": " + why + " (or a date alone, YYYY-MM-DD)");
  return *t;
}

double mean_intensity(const GridSeries& s, int64_t start_unix_s, double duration_s) {
  expect_usable(s, "mean_intensity");
  expect_duration(duration_s, "mean_intensity");
  const double start_off = static_cast<double>(start_unix_s - s.start_unix_s);
  const double end_off = start_off + duration_s;
  const double series_s = static_cast<double>(s.end_unix_s() - s.start_unix_s);
  const bool inside = start_unix_s >= s.start_unix_s && end_off <= series_s &&
                      (duration_s > 0 || start_unix_s < s.end_unix_s());
  LUMOS_EXPECT(inside, describe_window(start_unix_s, duration_s) +
                           ": expected it inside the grid series; " + span_utc(s) +
                           window_advice(s, duration_s));
  if (duration_s == 0) return value_at(s, start_unix_s);

  // Summing only the rows the window touches keeps the mean exact to rounding of each term.
  const double step = static_cast<double>(s.step_s);
  double sum = 0;
  for (auto i = static_cast<size_t>(start_off / step);
       i < s.g_per_kwh.size() && static_cast<double>(i) * step < end_off; ++i) {
    const double lo = std::max(start_off, static_cast<double>(i) * step);
    const double hi = std::min(end_off, static_cast<double>(i + 1) * step);
    sum += s.g_per_kwh[i] * (hi - lo);
  }
  return sum / duration_s;
}

BestStart best_start(const GridSeries& s, int64_t window_begin_s, int64_t window_end_s,
                     double duration_s, int64_t step_s) {
  expect_usable(s, "best_start");
  expect_duration(duration_s, "best_start");
  const int64_t step = step_s == 0 ? s.step_s : step_s;
  LUMOS_EXPECT(step > 0, "best_start: step " + std::to_string(step_s) + " s: expected > 0");
  LUMOS_EXPECT(window_end_s >= window_begin_s,
               "best_start: window ends at " + format_utc(window_end_s) +
                   " UTC: expected at or after its begin " + format_utc(window_begin_s) + " UTC");
  const int64_t candidates = (window_end_s - window_begin_s) / step + 1;
  const int64_t last_start = window_begin_s + (candidates - 1) * step;
  // Checking the first and the last candidate covers all: the window is contiguous.
  mean_intensity(s, window_begin_s, duration_s);
  mean_intensity(s, last_start, duration_s);

  const WindowIntegral integral(s);
  auto mean_from = [&](int64_t t) {
    if (duration_s == 0) return value_at(s, t);
    const double a = static_cast<double>(t - s.start_unix_s);
    return integral(a, a + duration_s) / duration_s;
  };
  BestStart best;
  best.start_unix_s = window_begin_s;
  best.first_mean_g_per_kwh = best.mean_g_per_kwh = best.worst_mean_g_per_kwh =
      mean_from(window_begin_s);
  for (int64_t k = 1; k < candidates; ++k) {
    const int64_t t = window_begin_s + k * step;
    const double m = mean_from(t);
    if (m < best.mean_g_per_kwh) {
      best.mean_g_per_kwh = m;
      best.start_unix_s = t;
    }
    best.worst_mean_g_per_kwh = std::max(best.worst_mean_g_per_kwh, m);
  }
  return best;
}

}  // namespace lumos::carbon
