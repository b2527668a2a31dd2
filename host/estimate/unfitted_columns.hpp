// The columns of dgxc-benchmarking's "Expected Performance" tables that published-runs.json leaves
// out: the same recipes at the other GPU counts (and the 405B recipe's proxy layouts with fewer
// layers), BF16 and FP8. No constant is fitted to them, so they measure how the estimate carries
// from the fitted columns to the rest of the table (`lumos bench estimate --unfitted`).
#pragma once
#include <vector>

#include "estimate/published_runs.hpp"

namespace lumos::estimate {

// One row per column and dtype, each the fitted row of its table with the column's data-parallel
// size and global batch (and layers and pipeline for the proxies), its published step time.
const std::vector<PublishedRun>& unfitted_columns();

}  // namespace lumos::estimate
