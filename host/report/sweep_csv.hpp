// The CSV files of a sweep and of `lumos pareto`: the variants table (one row per configuration,
// the columns documented in the README) and any table's chosen rows. Reading a CSV back is
// common/csv_table.hpp's; the front over its columns is sweep/pareto_csv.hpp's.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "common/csv_table.hpp"
#include "sweep/sweep_run.hpp"

namespace lumos::report {

// The columns of every configuration table lumos writes, in order: a sweep's variants and a
// layout search's layouts (docs/reference/outputs.md, "Configuration CSV"). A table leaves the
// cells it does not know empty.
std::vector<std::string> config_csv_columns();

// The share of the GPU's memory left free (0.1: 10%); "tight" below kTightHeadroom.
double headroom_fraction(double memory, double capacity);
constexpr double kTightHeadroom = 0.10;

// The variants table: a header, then one row per configuration in variant order.
void sweep_csv(std::ostream& os, const sweep::SweepResult& r);

// The variants table of `r` (which must outlive it) read cell by cell: each cell is the text
// sweep_csv writes, formatted when asked, so that a front over its numbers sees them rounded as
// the CSV holds them. `source` names it in errors.
CsvView sweep_view(const sweep::SweepResult& r, const std::string& source);

// Writes the header and the given rows of `t`.
void write_csv(std::ostream& os, const CsvView& t, const std::vector<size_t>& rows);

}  // namespace lumos::report
