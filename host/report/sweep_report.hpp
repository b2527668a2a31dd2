// The text report of `lumos sweep`: counts, the fastest configurations to train, the Pareto
// front, where the time went and the files written.
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/csv_table.hpp"
#include "cost/kernels_db.hpp"
#include "model/model_spec.hpp"
#include "sweep/sweep_run.hpp"

namespace lumos::report {

struct SweepReport {
  sweep::SweepStats stats;
  const CsvView* table = nullptr;  // the variants, all shards' (report/sweep_csv.hpp)
  std::vector<size_t> front;       // its rows on the Pareto front
  int top = 10;                    // configurations shown
  int ranks = 1;                   // MPI ranks that ran it
  std::vector<std::string> wrote;  // files written
  // For each shown row's range from the nearest published runs (estimate/uncertainty.hpp) and
  // the ties with the fastest within it; no ranges when either is missing.
  const cost::KernelsDb* db = nullptr;
  const model::ModelSpec* model = nullptr;
  // --min-headroom: the table already reads the rows with less free memory as not feasible
  // (report/sweep_headroom.hpp); the JSON says what was asked.
  double min_headroom_fraction = 0;
  std::string objectives;  // the front's, as given
};

void print_sweep(std::ostream& os, const SweepReport& r);

// The same as one JSON document (docs/reference/outputs.md, "sweep"): the counts, what was not
// shown and why, the fastest `top` with their ranges, and the Pareto front.
void sweep_json(std::ostream& os, const SweepReport& r);

// The feasible rows of `t`, fastest to train first (ties keep the variants' order).
std::vector<size_t> fastest_rows(const CsvView& t);

// Why the configurations of `t` not among the `shown` fastest were left out, each kind of reason
// with its count, most first ("do not fit in memory", "leave less memory free than
// --min-headroom", ...), then the feasible ones slower than those shown.
std::vector<std::pair<std::string, size_t>> dropped_kinds(const CsvView& t, size_t feasible,
                                                          size_t shown);

// A row's time to train as a range, in hours: the step time's range from the nearest published
// runs of its GPU and stack, scaled (time to train is proportional to the step time). {0, 0}
// when unknown or without the model and kernels_db.
std::pair<double, double> train_range_h(const SweepReport& rep, const CsvView& t, size_t row);

}  // namespace lumos::report
