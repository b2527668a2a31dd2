// The range of an estimate: what the model's errors on the nearest published runs (same GPU and
// software stack; kernels_db/calibration.json) say the true step time could be. A model has
// systematic errors where its kernels or its account of the framework are off; the published runs
// closest in GPU count and model size are the best evidence of how far off, here.
#pragma once
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"

namespace lumos::estimate {

struct StepRange {
  bool known = false;
  double low_us = 0, high_us = 0;  // contains the estimate itself
  std::string basis;               // "5 published a100/megatron-2021 runs", or why there is none
  std::vector<std::string> runs;   // the labels of the runs used
};

// Where kernels_db/calibration.json has cross-validation's left-out errors (each run's error with
// the fitted constants refitted without its source): the band estimate / (1 +- q), q the 90th
// percentile of |left-out error| of the runs of the same GPU and stack, widened to the GPU's runs
// and then to all runs until at least kMinBandRuns are in; the coverage cross-validation measured
// for such bands is stated in the basis. Runs of `exclude_source` are left out (that measurement).
// Without left-out errors: up to `nearest` runs of the same GPU and stack (or, when the stack has
// fewer than two, of stacks with the same attention and kernel fusion), nearest in log GPU count
// plus log parameters; each run's error e (lumos against published) turns the estimate into
// estimate / (1 + e).
StepRange step_range(const cost::KernelsDb& db, const std::string& gpu, const std::string& stack,
                     double gpus, double params, double step_us, int nearest = 5,
                     const std::string& exclude_source = "");
inline constexpr int kMinBandRuns = 8;
inline constexpr double kBandQuantile = 0.9;

}  // namespace lumos::estimate
