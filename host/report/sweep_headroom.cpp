#include "report/sweep_headroom.hpp"

#include <string>

#include "common/format.hpp"

namespace lumos::report {

CsvView with_min_headroom(const CsvView& t, double min_fraction) {
  if (!(min_fraction > 0)) return t;
  const size_t feasible = t.column("feasible"), reason = t.column("reason"),
               headroom = t.column("headroom_fraction");
  CsvView v = t;
  // The view is read cell by cell, many times over (the front, the ranking, the CSV): deciding
  // a row reads its two cells again rather than keeping a table of rows.
  v.cell = [t, min_fraction, feasible, reason, headroom](size_t row, size_t column) {
    if (column != feasible && column != reason) return t.cell(row, column);
    const std::string is_feasible = t.cell(row, feasible);
    if (is_feasible != "1") return t.cell(row, column);
    const double free = parse_finite(t.cell(row, headroom)).value_or(0);
    if (free >= min_fraction) return t.cell(row, column);
    if (column == feasible) return std::string("0");
    // No commas: the reason is one CSV cell.
    return strprintf("%s: %.0f%% of memory free < %.0f%% (--min-headroom)", kTooTightReason,
                     100 * free, 100 * min_fraction);
  };
  return v;
}

}  // namespace lumos::report
