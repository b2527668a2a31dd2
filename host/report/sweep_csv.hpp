// The CSV files of a sweep and of `lumos pareto`: the variants table (one row per configuration,
// the columns documented in the README), reading such a table back, and the Pareto front over
// chosen columns.
#pragma once
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/sweep_run.hpp"

namespace lumos::report {

// The variants table: a header, then one row per configuration in variant order.
void sweep_csv(std::ostream& os, const sweep::SweepResult& r);

// A CSV table held as text cells, with where it came from for error messages.
struct CsvTable {
  std::string source;  // file name
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // The column's index; throws InputError naming the file and the columns it has.
  size_t column(const std::string& name) const;
};

// Reads a CSV written by lumos (no quoted commas). Throws InputError for a missing or empty file
// or a row whose cell count differs from the header's (file and line).
CsvTable read_csv(const std::string& path);
CsvTable parse_csv(std::istream& in, const std::string& source);

// The rows of `t` on the Pareto front of `objectives`: column names, minimised, or maximised when
// prefixed with '-' (e.g. "-tokens_per_s"). Only rows whose `feasible` column (when there is one)
// is 1 take part. Two or three objectives. Rows come back in their order in `t`. Throws
// InputError for a missing column or a cell that is not a number (file, line, column).
std::vector<size_t> pareto_rows(const CsvTable& t, const std::vector<std::string>& objectives);

// Writes the header and the given rows of `t`.
void write_csv(std::ostream& os, const CsvTable& t, const std::vector<size_t>& rows);

}  // namespace lumos::report
