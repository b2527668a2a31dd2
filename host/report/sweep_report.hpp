// The text report of `lumos sweep`: counts, the fastest configurations to train, the Pareto
// front, where the time went and the files written.
#pragma once
#include <ostream>
#include <string>
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
};

void print_sweep(std::ostream& os, const SweepReport& r);

}  // namespace lumos::report
