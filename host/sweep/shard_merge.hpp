// A sweep split into shards (`lumos sweep --shard i/n`, or the ranks of `mpirun`) joined back:
// the shards' variants CSVs as one table in the sweep's order, and their statistics summed.
// `lumos pareto --merge` and the MPI gather on rank 0 both use it.
#pragma once
#include <string>
#include <vector>

#include "common/csv_table.hpp"
#include "sweep/sweep_run.hpp"

namespace lumos::sweep {

// The parts' rows in one table, sorted by their `index` column when they have one (else in the
// parts' order); its source is the first part's. Throws InputError when there is no part, a part's
// columns differ from the first's, an index is not a count, or an index is in two rows (the same
// shard given twice).
CsvTable merge_shards(std::vector<CsvTable> parts);

// A shard's statistics as one line of text, and the statistics of several shards: counts and
// summed thread times add up, the wall clock is the longest shard's.
std::string stats_line(const SweepStats& s);
SweepStats add_stats(SweepStats sum, const std::string& line);

// The ranks' parts gathered under mpirun, each its stats_line, a newline and its variants CSV:
// the merged table (named `source` in errors) and the summed statistics in `stats`.
CsvTable merge_gathered(const std::vector<std::string>& parts, const std::string& source,
                        SweepStats* stats);

}  // namespace lumos::sweep
