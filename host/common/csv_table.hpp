// CSV tables as lumos writes them (no quoted commas): read back as text cells, or read one cell at
// a time from anything that can format its cells. Errors name the file, the line and the column.
#pragma once
#include <cstddef>
#include <functional>
#include <istream>
#include <string>
#include <vector>

namespace lumos {

// The index of column `name` in `header`; throws InputError naming `source` and the columns it
// has.
size_t csv_column(const std::vector<std::string>& header, const std::string& name,
                  const std::string& source);

// A CSV table held as text cells, with where it came from for error messages.
struct CsvTable {
  std::string source;  // file name
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Lines before the header that start with '#' (a sweep shard's provenance,
  // sweep/shard_header.hpp), without their line ends.
  std::vector<std::string> comments;
  size_t column(const std::string& name) const { return csv_column(header, name, source); }
};

// Reads a CSV written by lumos. Throws InputError for a missing or empty file or a row whose cell
// count differs from the header's (file and line). Blank lines are skipped, and so are lines
// starting with '#' before the header (kept in `comments`).
CsvTable read_csv(const std::string& path);
CsvTable parse_csv(std::istream& in, const std::string& source);

// A table read one cell at a time: a CsvTable, or rows kept as values and formatted cell by cell
// as their CSV writes them (so that a large table is never held as text).
struct CsvView {
  std::string source;
  std::vector<std::string> header;
  size_t rows = 0;
  std::function<std::string(size_t row, size_t column)> cell;
  size_t column(const std::string& name) const { return csv_column(header, name, source); }
};

// A view of `t`, which must outlive it.
CsvView csv_view(const CsvTable& t);

}  // namespace lumos
