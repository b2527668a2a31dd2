// Fitting kernels_db's step-level constants to published runs: each fitted stack's
// kernel_time_factor (kernels_db/stacks.json; docs/design.md), set so that the signed mean error of
// the stack's tier-A rows is zero. One routine serves the in-sample fit and cross-validation,
// which refits on every source but one (estimate/cross_validation.hpp).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/published_runs.hpp"

namespace lumos::estimate {

// A constant fitted on the rows of some stacks and used by them and the stacks that inherit it
// (the same kernels under another framework: kernels_db/stacks.json says which).
struct FittedConstant {
  std::string stack;                    // stacks.<stack>.kernel_time_factor
  std::vector<std::string> applies_to;  // the stack itself first
  std::vector<std::string> fitted_on;   // the stacks whose tier-A rows the fit reads
};
const std::vector<FittedConstant>& fitted_constants();

// A run's estimated step time as its constant varies, from two estimates: linear between (and
// beyond) kFitLow and kFitHigh, which the estimate is where no overlap changes the critical path.
inline constexpr double kFitLow = 1.0, kFitHigh = 1.2;
struct RunResponse {
  const PublishedRun* run = nullptr;
  double published_step_s = 0;
  double params = 0;  // of the model, Megatron's padded vocabulary included
  int constant = -1;  // index into fitted_constants(), -1 where none applies
  double step_low_s = 0, step_high_s = 0;
  double step_at(double value) const;
};
std::vector<RunResponse> run_responses(const cost::KernelsDb& db,
                                       const std::vector<PublishedRun>& runs);

struct ConstantValue {
  std::string stack;
  double value = 1;
  int fit_rows = 0;  // 0: no row to fit on; the value is the neutral 1
};

// Fits every constant on the tier-A runs of its own stack for which `use(i)` holds (i indexes
// `responses`): the value whose signed mean error is zero, within stacks.json's [0.5, 2].
std::vector<ConstantValue> fit_constants(const std::vector<RunResponse>& responses,
                                         const std::function<bool(size_t)>& use);
// `db` with the fitted values set on every stack that uses them.
cost::KernelsDb with_constants(cost::KernelsDb db, const std::vector<ConstantValue>& values);

// Delayed scaling's replica skew (stacks.json fp8_recipes.delayed_scaling.replica_skew_us) is a
// second fitted constant, fitted by least squares outside this routine (docs/design.md, "Replica
// skew at amax reductions") on the runs of these sources alone; a fit that leaves all of them out
// has nothing to set it from and prices without it.
const std::vector<std::string>& replica_skew_fit_sources();
// `db` with every recipe's replica skew, and every stack's copy of it, at 0.
cost::KernelsDb without_replica_skew(cost::KernelsDb db);

}  // namespace lumos::estimate
