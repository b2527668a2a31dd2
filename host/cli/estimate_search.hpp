// lumos estimate --search: the layout search's options read, run and rendered (cmd_estimate.cpp
// declares the options; docs/design.md, "Interfaces").
#pragma once

#include <cxxopts.hpp>

#include <cstdint>

#include "cli/count_options.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::cli {

// 2^20 GPUs: the most model::check_layout accepts.
inline constexpr CountOption kGpus{"gpus", 1, int64_t{1} << 20}, kTop{"top", 0, 1000000};

int run_estimate_search(const cxxopts::ParseResult& a, const cost::KernelsDb& db);

}  // namespace lumos::cli
