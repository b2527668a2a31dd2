// The Pareto front of a variants table (a CSV read back, or a sweep's rows seen through the cells
// their CSV would hold), over chosen columns.
#pragma once
#include <string>
#include <vector>

#include "common/csv_table.hpp"

namespace lumos::sweep {

// The front `lumos sweep` and `lumos pareto` take without --objectives.
constexpr const char* kDefaultObjectives = "time_to_train_h,gpu_hours,operational_kg";

// The columns of `--objectives` ("time_to_train_h,gpu_hours"): two or three, else InputError.
std::vector<std::string> parse_objectives(const std::string& text);

// The rows of `t` on the Pareto front of `objectives`: column names, minimised, or maximised when
// prefixed with '-' (e.g. "-tokens_per_s"). Only rows whose `feasible` column (when there is one)
// is 1 take part. Two or three objectives. Rows come back in their order in `t`. Throws
// InputError for a missing column or a cell that is not a number (file, line, column).
std::vector<size_t> pareto_rows(const CsvView& t, const std::vector<std::string>& objectives);

}  // namespace lumos::sweep
