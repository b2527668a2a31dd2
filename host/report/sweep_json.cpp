// `lumos sweep --json`: the report of report/sweep_report.cpp as one document, its rows in the
// variants CSV's columns (docs/reference/outputs.md, "sweep").
#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/sweep_report.hpp"

namespace lumos::report {

namespace {

// One row of the table as an object: its columns, those that hold names as strings and the rest
// as numbers (as the CSV writes them), empty cells left out, so that a field's type never
// depends on the row.
void sweep_row_json(common::JsonWriter& w, const CsvView& t, size_t row) {
  static const std::set<std::string> kText = {"gpu",       "topology", "speed", "region",
                                              "recompute", "stack",    "dtype", "reason"};
  for (size_t c = 0; c < t.header.size(); ++c) {
    const std::string v = t.cell(row, c);
    if (v.empty()) continue;
    if (kText.count(t.header[c])) {
      w.field(t.header[c], v);
      continue;
    }
    const std::optional<double> x = parse_finite(v);
    if (x) w.field(t.header[c], *x);
  }
}

}  // namespace

void sweep_json(std::ostream& os, const SweepReport& r) {
  const CsvView& t = *r.table;
  const sweep::SweepStats& s = r.stats;
  const std::vector<size_t> ok = fastest_rows(t);
  const size_t shown = std::min<size_t>(static_cast<size_t>(std::max(r.top, 0)), ok.size());
  common::JsonWriter w(os);
  w.begin_object().field("configurations", uint64_t{s.variants});
  w.field("in_this_shard", uint64_t{s.rows}).field("estimated", uint64_t{s.estimated});
  w.field("feasible", uint64_t{ok.size()}).field("on_front", uint64_t{r.front.size()});
  w.field("graphs", uint64_t{s.graphs}).field("ranks", r.ranks).field("total_s", s.total_s);
  w.field("objectives", r.objectives).field("min_headroom_fraction", r.min_headroom_fraction);
  w.field("not_shown", uint64_t{t.rows - shown}).key("not_shown_by_reason").begin_array();
  for (const auto& [why, count] : dropped_kinds(t, ok.size(), shown))
    w.begin_object().field("reason", why).field("count", uint64_t{count}).end_object();
  w.end_array().key("fastest").begin_array();
  const std::pair<double, double> best = shown ? train_range_h(r, t, ok[0]) : std::pair{0.0, 0.0};
  const size_t ttt = t.column("time_to_train_h");
  for (size_t i = 0; i < shown; ++i) {
    w.begin_object();
    sweep_row_json(w, t, ok[i]);
    w.field("rank", uint64_t{i + 1});
    const std::pair<double, double> range = train_range_h(r, t, ok[i]);
    if (range.second > 0) {
      w.field("time_to_train_low_h", range.first).field("time_to_train_high_h", range.second);
      w.field("tie_with_best", parse_finite(t.cell(ok[i], ttt)).value_or(0) <= best.second);
    }
    w.end_object();
  }
  w.end_array().key("front").begin_array();
  for (size_t row : r.front) {
    w.begin_object();
    sweep_row_json(w, t, row);
    w.end_object();
  }
  w.end_array().key("wrote").begin_array();
  for (const std::string& path : r.wrote) w.value(path);
  w.end_array().end_object();
  os << '\n';
}

}  // namespace lumos::report
