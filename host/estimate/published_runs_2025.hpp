// The published-runs.json rows of 2023-25 software: NVIDIA dgxc-benchmarking's BF16/FP8 pairs of
// one layout on DGX H100 (NeMo 24.12) and MosaicML llm-foundry's A100 FSDP table. The pairs
// separate FP8's gain from its bookkeeping, which a constant fitted on FP8 rows alone cannot.
#pragma once
#include <vector>

#include "estimate/published_runs.hpp"

namespace lumos::estimate {

// The source of dgxc-benchmarking's rows: the only source fitted to the delayed-scaling recipe's
// replica skew (stacks.json fp8_recipes.delayed_scaling.replica_skew_us).
inline constexpr const char* kDgxcSource = "NVIDIA/dgxc-benchmarking v25.02.01 (NeMo 24.12)";

// Appends the rows, in published-runs.json's order, without their `options` (published_runs()
// fills those for every row).
void append_runs_2025(std::vector<PublishedRun>* v);

}  // namespace lumos::estimate
