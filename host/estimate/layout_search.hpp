// Which layout of a model on N GPUs is fastest, and does it fit? Enumerates Megatron layouts
// (tensor, context, pipeline and data parallel degrees, micro-batch size, interleaving, full
// recomputation or none), drops those that break a layout rule or do not fit in memory (checked
// before any graph is built), ranks the rest as one sweep (sweep/sweep_run.hpp: folded graphs,
// batch replay, all cores; each step time equals `lumos estimate`'s), then estimates the fastest
// in full for their breakdown.
#pragma once
#include <string>
#include <vector>

#include "common/progress.hpp"
#include "estimate/estimate.hpp"

namespace lumos::estimate {

// The default budget leaves a quarter of 1 GiB for the process itself and the search's results.
constexpr double kDefaultSearchMemoryBytes = 768.0 * 1024.0 * 1024.0;

struct SearchRequest {
  EstimateRequest base;  // model, GPU, topology, dtype, gbs; degrees are searched
  int64_t gpus = 0;
  int max_tp = 8;  // tensor parallel stays inside a node
  int max_pp = 16;
  int max_interleave = 8;
  std::vector<int64_t> mbs = {1, 2, 4};
  int threads = 0;  // 0: all cores
  // Graphs built at once stay within this many bytes (estimated from each graph's exact node
  // count): a layout whose ranking graph (layers folded) alone needs more is too large; one whose
  // whole graph alone needs more is not estimated in full.
  double memory_budget_bytes = kDefaultSearchMemoryBytes;
  size_t detailed = 10;  // the fastest rows estimated in full (breakdown)
  // Rank only layouts that leave this share of the GPU's memory free (0.1: 10%); the others
  // count as too tight.
  double min_headroom_fraction = 0;
  // Layouts ranked of those that fit, then the fastest estimated in full (common/progress.hpp).
  ProgressFn rank_progress, detail_progress;
};

struct SearchRow {
  ParallelConfig cfg;
  double step_time_us = 0;
  StepRange step_range;  // from the nearest published runs of this GPU and stack
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  double memory_bytes = 0;  // the worst stage's, per GPU
  // The breakdown (mean over stages) of the estimate in full, for the first `detailed` rows
  // whose whole graph fits the memory budget.
  bool detailed = false;
  replay::Breakdown breakdown;
};

struct SearchResult {
  std::vector<SearchRow> rows;  // layouts that fit, fastest (most tokens/s) first
  std::string stack;            // the software stack searched
  size_t candidates = 0;        // layouts enumerated
  size_t invalid = 0;           // broke a layout rule
  size_t too_big = 0;           // did not fit in memory
  size_t too_tight = 0;         // fit, with less free memory than min_headroom_fraction
  // Graph (layers folded) above kMaxStepGraphNodes or, alone, above the memory budget.
  size_t too_large = 0;
  size_t graphs = 0;  // step graphs the ranking built (layouts of one structure share one)
  double rank_s = 0, detail_s = 0;  // wall clock: the sweep, the estimates in full
  // The hardware searched, resolved (the topology's or the option's NIC and node size).
  std::string gpu, topology;
  double nic_gbps = 0, nvlink_gbps = 0, capacity_bytes = 0;
  int gpus_per_node = 0;
};

// Throws InputError when gpus < 1, for an unknown GPU or topology, or a dtype the GPU lacks; an
// empty `rows` means no layout fits.
SearchResult search_layouts(const SearchRequest& req, const cost::KernelsDb& db);

}  // namespace lumos::estimate
