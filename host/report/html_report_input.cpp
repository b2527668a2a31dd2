// Reading `lumos report`'s inputs: a variants CSV becomes an array of row objects (numbers where a
// cell is a number), a --json report is checked and kept as it was written.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "common/json_syntax.hpp"
#include "common/json_writer.hpp"
#include "report/html_report.hpp"

namespace lumos::report {

namespace {

constexpr const char* kExpected =
    "expected a variants CSV (lumos sweep -o, lumos estimate --search --csv) or the --json "
    "output of lumos replay, estimate or carbon";
// A report page is read by a browser in one go: inputs beyond this are not what it is for.
constexpr uint64_t kMaxInputBytes = uint64_t{256} << 20;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A cell as a JSON value: a finite number when the whole cell is one, else its text.
void cell_value(common::JsonWriter& w, const std::string& cell) {
  if (!cell.empty()) {
    char* end = nullptr;
    const double d = std::strtod(cell.c_str(), &end);
    if (end == cell.c_str() + cell.size() && std::isfinite(d)) {
      w.value(d);
      return;
    }
  }
  w.value(cell);
}

HtmlSection sweep_section(const std::string& path) {
  const CsvTable t = read_csv(path);
  // The columns the page draws from: another CSV (a grid series, a Pareto front) is not a sweep.
  for (const char* column : {"feasible", "step_time_s"})
    LUMOS_EXPECT(std::find(t.header.begin(), t.header.end(), column) != t.header.end(),
                 path + ": no column '" + column + "'; " + kExpected);
  LUMOS_EXPECT(!t.rows.empty(), path + ": the table has no rows; " + kExpected);
  std::ostringstream os;
  common::JsonWriter w(os, common::JsonWriter::Document::plain);
  w.begin_array();
  for (const std::vector<std::string>& row : t.rows) {
    w.begin_object();
    for (size_t c = 0; c < t.header.size(); ++c) {
      w.key(t.header[c]);
      cell_value(w, row[c]);
    }
    w.end_object();
  }
  w.end_array();
  return {"sweep", path, os.str()};
}

// Which command wrote a --json report, by the fields only it writes.
std::string report_kind(simdjson::dom::object doc) {
  auto has = [&](const char* key) { return doc[key].error() == simdjson::SUCCESS; };
  if (has("stages") && has("layout") && has("breakdown")) return "estimate";
  if (has("steps") && (has("breakdown") || has("ranks"))) return "replay";
  if (has("energy_kwh") && has("operational_kg")) return "carbon";
  return "";
}

// The fields the page draws for a report of `kind`, each of the type the command writes: a
// report edited by hand or cut short is refused here, not drawn as an empty section.
void check_report_fields(simdjson::dom::object doc, const std::string& kind,
                         const std::string& path) {
  using simdjson::dom::element_type;
  struct Field {
    const char* key;
    element_type type;
    bool required;
  };
  constexpr element_type kObject = element_type::OBJECT, kArray = element_type::ARRAY,
                         kNumber = element_type::DOUBLE;
  auto name = [](element_type t) {
    return t == kObject ? "an object" : t == kArray ? "an array" : "a number";
  };
  auto number = [](element_type t) {
    return t == element_type::DOUBLE || t == element_type::INT64 || t == element_type::UINT64;
  };
  std::vector<Field> fields;
  if (kind == "estimate")
    fields = {{"layout", kObject, true},
              {"model", kObject, true},
              {"step_time_s", kNumber, true},
              {"breakdown", kObject, true},
              {"stages", kArray, true},
              {"tokens_per_s", kNumber, false},
              {"mfu", kNumber, false},
              {"memory", kObject, false},
              {"operational_kg", kNumber, false},
              {"energy_kwh", kNumber, false}};
  else if (kind == "replay")
    fields = {{"steps", kArray, true},
              {"breakdown", kObject, false},
              {"measured_breakdown", kObject, false},
              {"ranks", kArray, false},
              {"critical_path", kObject, false}};
  else
    fields = {{"energy_kwh", kNumber, true},   {"operational_kg", kNumber, true},
              {"embodied_kg", kNumber, false}, {"sci_kg", kNumber, false},
              {"hours", kNumber, false},       {"gpu_energy_kwh", kNumber, false}};
  for (const Field& f : fields) {
    simdjson::dom::element v;
    if (doc[f.key].get(v) != simdjson::SUCCESS) {
      LUMOS_EXPECT(!f.required, path + ": field '" + f.key + "' is missing; a " + kind +
                                    " report has it (" + kExpected + ")");
      continue;
    }
    const bool ok = f.type == kNumber ? number(v.type()) : v.type() == f.type;
    LUMOS_EXPECT(ok, path + ": field '" + f.key + "': expected " + name(f.type) + ", as lumos " +
                         kind + " --json writes it");
  }
}

}  // namespace

HtmlSection read_report_input(const std::string& path) {
  if (ends_with(path, ".csv")) return sweep_section(path);
  const common::FileBytes bytes = common::read_regular_file(
      path, simdjson::SIMDJSON_PADDING, kMaxInputBytes, "a CSV or JSON report",
      "lumos report (256 MiB: a page a browser can open)");
  const std::string text(bytes.data.data(), bytes.size);
  // A gzip file (a trace, most likely) is not a report: say so rather than where its JSON breaks.
  LUMOS_EXPECT(bytes.size < 2 || static_cast<unsigned char>(text[0]) != 0x1f ||
                   static_cast<unsigned char>(text[1]) != 0x8b,
               path + ": a gzip file (a trace?), not a report; " + kExpected);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(text).get(root))
    throw InputError(path + ": invalid JSON" + common::json_error_position(text) + " (" +
                     simdjson::error_message(err) + "); " + kExpected);
  simdjson::dom::object doc;
  if (root.get(doc) != simdjson::SUCCESS)
    throw InputError(path + ": not a JSON object; " + kExpected);
  const std::string kind = report_kind(doc);
  if (kind.empty()) throw InputError(path + ": not a report lumos report reads; " + kExpected);
  check_report_fields(doc, kind, path);
  return {kind, path, text};
}

}  // namespace lumos::report
