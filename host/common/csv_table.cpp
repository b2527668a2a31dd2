#include "common/csv_table.hpp"

#include <sstream>

#include "common/error.hpp"
#include "common/file_bytes.hpp"

namespace lumos {

namespace {

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t end = line.find(',', at);
    out.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return out;
    at = end + 1;
  }
}

}  // namespace

size_t csv_column(const std::vector<std::string>& header, const std::string& name,
                  const std::string& source) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  std::string have;
  for (const auto& h : header) {
    if (!have.empty()) have += ", ";
    have += h;
  }
  throw InputError(source + ": no column '" + name + "' (columns: " + have + ")");
}

CsvTable read_csv(const std::string& path) {
  // Through the one input reader: a FIFO or a folder is refused, not waited on or misread.
  const common::FileBytes bytes =
      common::read_regular_file(path, 0, common::max_trace_bytes(), "a CSV file");
  std::istringstream in(std::string(bytes.data.data(), bytes.size));
  return parse_csv(in, path);
}

CsvTable parse_csv(std::istream& in, const std::string& path) {
  CsvTable t;
  t.source = path;
  std::string line;
  size_t n = 0;  // the line number of `line`
  bool got = false;
  while ((got = static_cast<bool>(std::getline(in, line)))) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] != '#') break;
    t.comments.push_back(line);
  }
  LUMOS_EXPECT(got && !line.empty(), path + ": empty file, expected a CSV header");
  t.header = split_cells(line);
  for (++n; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells = split_cells(line);
    LUMOS_EXPECT(cells.size() == t.header.size(),
                 path + ":" + std::to_string(n) + ": " + std::to_string(cells.size()) +
                     " cells, expected " + std::to_string(t.header.size()) + " as in the header");
    t.rows.push_back(std::move(cells));
  }
  return t;
}

CsvView csv_view(const CsvTable& t) {
  CsvView v;
  v.source = t.source;
  v.header = t.header;
  v.rows = t.rows.size();
  v.cell = [&t](size_t row, size_t column) { return t.rows[row][column]; };
  return v;
}

}  // namespace lumos
