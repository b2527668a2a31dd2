// Published DGX-H100 training throughputs with the layouts that produced them: the calibration
// check of the model-driven estimate (calibration.md §1.2, Megatron-Bridge's performance summary,
// and NeMo's for GPT-3 175B). These are figures lumos did not measure.
#pragma once
#include <string>
#include <vector>

#include "estimate/estimate.hpp"

namespace lumos::estimate {

struct PublishedRun {
  std::string label;
  std::string source;
  double model_tflops_per_gpu = 0;  // as published
  std::string note;                 // what lumos models differently, if anything
  EstimateRequest request;          // the published layout as lumos options
  std::string options;              // the same as `lumos estimate` flags
};

const std::vector<PublishedRun>& published_runs();

}  // namespace lumos::estimate
