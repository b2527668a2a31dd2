#include "sweep/pareto_csv.hpp"

#include <optional>

#include "common/error.hpp"
#include "common/format.hpp"
#include "replay/pareto.hpp"
#include "sweep/sweep_spec.hpp"

namespace lumos::sweep {

std::vector<std::string> parse_objectives(const std::string& text) {
  std::vector<std::string> o = parse_name_axis(text, "--objectives");
  LUMOS_EXPECT(o.size() == 2 || o.size() == 3,
               "--objectives " + text + ": expected two or three columns");
  return o;
}

std::vector<size_t> pareto_rows(const CsvView& t, const std::vector<std::string>& objectives) {
  LUMOS_EXPECT(objectives.size() == 2 || objectives.size() == 3,
               "--objectives: expected two or three columns");
  std::vector<size_t> cols;
  std::vector<double> sign;
  for (const std::string& o : objectives) {
    const bool max = !o.empty() && o[0] == '-';
    cols.push_back(t.column(max ? o.substr(1) : o));
    sign.push_back(max ? -1.0 : 1.0);
  }
  size_t feasible_col = t.header.size();
  for (size_t i = 0; i < t.header.size(); ++i)
    if (t.header[i] == "feasible") feasible_col = i;
  std::vector<size_t> candidates;
  std::vector<std::vector<double>> obj(cols.size());
  for (size_t r = 0; r < t.rows; ++r) {
    if (feasible_col < t.header.size()) {
      const std::string f = t.cell(r, feasible_col);
      LUMOS_EXPECT(f == "0" || f == "1", t.source + ":" + std::to_string(r + 2) +
                                             ": column 'feasible': expected 0 or 1, got '" + f +
                                             "'");
      if (f != "1") continue;
    }
    candidates.push_back(r);
    for (size_t k = 0; k < cols.size(); ++k) {
      const std::string s = t.cell(r, cols[k]);
      const std::optional<double> parsed = parse_finite(s);
      const double v = parsed.value_or(0);
      LUMOS_EXPECT(parsed.has_value(), t.source + ":" + std::to_string(r + 2) + ": column '" +
                                           t.header[cols[k]] + "': '" + s + "' is not a number");
      obj[k].push_back(sign[k] * v);
    }
  }
  std::vector<size_t> out;
  if (candidates.empty()) return out;
  for (uint32_t i : replay::pareto_front(obj)) out.push_back(candidates[i]);
  return out;
}

}  // namespace lumos::sweep
