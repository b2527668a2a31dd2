// Which layout of a model on N GPUs is fastest, and does it fit? Enumerates Megatron layouts
// (tensor, context, pipeline and data parallel degrees, micro-batch size, interleaving, full
// recomputation or none), drops those that break a layout rule or do not fit in memory (checked
// before any graph is built), and estimates the rest, on all cores.
#pragma once
#include <string>
#include <vector>

#include "estimate/estimate.hpp"

namespace lumos::estimate {

// What an estimate holds per graph node at its peak (graph, edges, metadata, replay), measured on
// GPT-3 175B layouts of 1.2 M and 2.1 M nodes: 246-249 bytes per node (BENCHMARKS.md).
// The default budget leaves a quarter of 1 GiB for the process itself and the search's results.
constexpr double kEstimateBytesPerNode = 256;
constexpr double kDefaultSearchMemoryBytes = 768.0 * 1024.0 * 1024.0;

struct SearchRequest {
  EstimateRequest base;  // model, GPU, topology, dtype, gbs; degrees are searched
  int64_t gpus = 0;
  int max_tp = 8;  // tensor parallel stays inside a node
  int max_pp = 16;
  int max_interleave = 8;
  std::vector<int64_t> mbs = {1, 2, 4};
  int threads = 0;  // 0: all cores
  // Graphs built at once stay within this many bytes (estimated from each layout's exact node
  // count); a layout whose graph alone needs more counts as too large to model.
  double memory_budget_bytes = kDefaultSearchMemoryBytes;
};

struct SearchRow {
  ParallelConfig cfg;
  Estimate estimate;
};

struct SearchResult {
  std::vector<SearchRow> rows;  // layouts that fit, fastest (most tokens/s) first
  size_t candidates = 0;        // layouts enumerated
  size_t invalid = 0;           // broke a layout rule
  size_t too_big = 0;           // did not fit in memory
  size_t too_large = 0;         // graph above kMaxStepGraphNodes or the memory budget (too many
                                // micro-batches x layers)
};

// Throws InputError when gpus < 1, for an unknown GPU or topology, or a dtype the GPU lacks; an
// empty `rows` means no layout fits.
SearchResult search_layouts(const SearchRequest& req, const cost::KernelsDb& db);

}  // namespace lumos::estimate
