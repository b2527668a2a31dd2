// A sweep's variants table with --min-headroom applied: a feasible configuration that leaves less
// of its GPU's memory free than asked is shown as not feasible, with why, so that the ranking, the
// Pareto front, the variants CSV and `lumos pareto` over it all leave it out alike.
#pragma once
#include "common/csv_table.hpp"

namespace lumos::report {

// `t` read through: rows of `t` that are feasible with headroom_fraction below `min_fraction`
// read feasible 0 and reason "too tight: ...". `t` (and what it reads) must outlive the view;
// with `min_fraction` 0 it reads as `t`.
CsvView with_min_headroom(const CsvView& t, double min_fraction);

// The reason such a row is given, as the report's tally counts it ("too tight").
inline constexpr const char* kTooTightReason = "too tight";

}  // namespace lumos::report
