// Published training runs with the layouts that produced them: the calibration check of the
// model-driven estimate. DGX-H100 throughputs (calibration.md §1.2: Megatron-Bridge's performance
// summary) and the rows of published-runs.json (Narayanan et al. SC21 Tables 1-2, BLOOM-176B,
// torchtitan, dgxc-benchmarking, llm-foundry). These are figures lumos did not measure; rows of
// sources kept out of calibration (docs/benchmarks.md, "Held-out sources") are not among them.
#pragma once
#include <string>
#include <vector>

#include "estimate/estimate.hpp"

namespace lumos::estimate {

struct PublishedRun {
  std::string label;
  std::string id;          // published-runs.json id, or "dgx-h100-published" for the H100 rows
  std::string source;      // where the figure was read
  std::string tier = "A";  // published-runs.json's: A a table value with its configuration
  // One of the two, as published: model TFLOP/s per GPU (Megatron's formula, the H100 rows), or
  // the iteration time (read, or derived by published-runs.json from the published rate).
  double model_tflops_per_gpu = 0;
  double step_time_s = 0;
  std::string note;           // what lumos models differently, if anything
  EstimateRequest request;    // the published layout as lumos options
  std::string model_options;  // the model part of them: a preset, or one with its dimensions
  std::string options;        // the request as `lumos estimate` flags
};

const std::vector<PublishedRun>& published_runs();

// The request as `lumos estimate` flags, after `model_flags` (the model part).
std::string options_of(const EstimateRequest& q, const std::string& model_flags);

}  // namespace lumos::estimate
