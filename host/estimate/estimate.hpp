// `lumos estimate`: builds the model-driven graph of one training iteration, replays it with the
// reference replay and reports step time, throughput, model and hardware FLOP rates, MFU/HFU,
// the execution breakdown (Lumos's four classes plus the pipeline bubble) and memory per GPU.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/uncertainty.hpp"
#include "model/memory_footprint.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"

namespace lumos::estimate {

// The model's vocabulary, used throughout the answers built on it.
using model::Layout;
using model::ModelSpec;
using model::ParallelConfig;
using model::StageMemory;
using model::StepCostOptions;
using model::StepGraph;

struct EstimateRequest {
  ModelSpec model;
  ParallelConfig cfg;
  std::string gpu = "h100";
  std::string topology;    // "" = the GPU's default topology in kernels_db
  double nic_gbps = 0;     // > 0: the NIC line rate (GB/s) in place of the topology's
  int gpus_per_node = 0;   // > 0: in place of the topology's
  double nvlink_gbps = 0;  // > 0: the GPU's NVLink bandwidth per direction (cost::with_nvlink_gbps)
  StepCostOptions options;
  // Applied to the priced kernels before the graph is built (a trace's calibration), if set.
  std::function<void(model::StepCosts&)> adjust_costs;
  // When set, the graph's nodes are counted before it is built (a dry run that allocates no
  // graph and stops once it passes `count_nodes_up_to`) and this is called with the count: a
  // caller's cap on what the graph will cost (`lumos generate --max-output-bytes`), checked
  // before the work.
  std::function<void(uint64_t nodes)> check_nodes;
  uint64_t count_nodes_up_to = model::kMaxStepGraphNodes;
  // Fold the schedule's steady state (model::MicrobatchFold) when the layout has enough
  // micro-batches: the graph then stands for its iteration but holds no node per kernel (no
  // trace can be written from it). See estimate/folded_estimate.hpp.
  bool fold_microbatches = false;
};

struct StageReport {
  int stage = 0;
  int32_t rank = 0;
  double end_us = 0;            // when its final stream synchronize returns
  replay::Breakdown breakdown;  // over [0, step end): idle time is the bubble when p > 1
  StageMemory memory;
};

struct Estimate {
  ModelSpec model;
  ParallelConfig cfg;
  Layout layout;
  std::string gpu;
  std::string topology;
  std::string stack_summary;  // what the software stack (cfg.stack) runs, in a few words
  double step_time_us = 0;
  StepRange step_range;  // from the nearest published runs of this GPU and stack
  double tokens_per_s = 0;
  double model_flops = 0;        // Megatron's formula, whole iteration
  double hardware_flops = 0;     // with recomputation
  double graph_model_flops = 0;  // summed over the graph's kernels, times the replicas of a stage
  double graph_hw_flops = 0;
  double model_tflops_per_gpu = 0;
  double hw_tflops_per_gpu = 0;
  double peak_tflops = 0;  // dense peak of the GEMM dtype
  double mfu = 0, hfu = 0;
  replay::Breakdown breakdown;  // mean over stages
  // GPU time by kernel class (kernels_db/kernel_classes.json: gemm, attention_fwd, comm, ...),
  // mean over stages; kernels that overlap both count.
  std::vector<std::pair<std::string, double>> kernel_time_us;
  std::vector<StageReport> stages;
  double memory_capacity_bytes = 0;
  int worst_memory_stage = 0;
  bool fits = false;
  uint64_t nodes = 0, edges = 0;
  double build_ms = 0, replay_ms = 0;
};

struct EstimateRun {
  Estimate estimate;
  StepGraph step;
  replay::ReplayResult replay;
};

// Throws InputError where a layout's settings contradict each other beyond what a layout search
// passes through (FP8 reduce-scatter buffers for a job without FP8).
void check_settings(const model::ParallelConfig& c);
// The settings that need the stack: --tp-only-amax-red sets where a delayed-scaling recipe
// reduces its amaxes, which a stack on current scaling does not do across ranks.
void check_stack_settings(const model::ParallelConfig& c, const cost::StackSpec& stack,
                          const cost::KernelsDb& db);
// One layout the user named (`lumos estimate`, `lumos generate`; not a search or sweep, which pass
// through layouts an option does not act on): a tensor-parallel overlap option that cannot act
// on it is refused, not ignored.
void check_named_layout(const model::ParallelConfig& c, const cost::StackSpec& stack);

// Throws InputError for an invalid model or layout, or an unknown GPU or topology.
EstimateRun run_estimate(const EstimateRequest& req, const cost::KernelsDb& db);

}  // namespace lumos::estimate
