// Leave-one-source-out cross-validation of the model-driven estimate (`lumos bench estimate
// --cross-validate`): for every source of the published runs, the fitted constants are refitted
// on all other sources (estimate/constant_fit.hpp) and the left-out source's runs predicted with
// them; beside it, the in-sample error of the fit on every source. The left-out errors are what an
// estimate's range is made of (kernels_db/calibration.json; docs/design.md).
#pragma once
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/constant_fit.hpp"
#include "estimate/published_runs.hpp"

namespace lumos::estimate {

struct CrossValidatedRun {
  const PublishedRun* run = nullptr;
  double published_step_s = 0;
  double in_sample_step_s = 0;  // constants fitted on every source
  double left_out_step_s = 0;   // constants fitted without this run's source
  double in_sample_error_pct = 0, left_out_error_pct = 0;  // negative: lumos too fast
  double params = 0;                                       // of the model
};

struct SourceError {
  std::string source;
  int rows = 0;
  double left_out_mean_abs_pct = 0, left_out_signed_pct = 0;
  double in_sample_mean_abs_pct = 0, in_sample_signed_pct = 0;
  std::vector<ConstantValue> constants;  // as refitted without the source
};

struct CrossValidation {
  std::vector<CrossValidatedRun> runs;                        // in the order given
  std::vector<SourceError> sources;                           // in order of first appearance
  std::vector<ConstantValue> in_sample;                       // fitted on every source
  double left_out_mean_abs_pct = 0, left_out_signed_pct = 0;  // over all runs
  double in_sample_mean_abs_pct = 0, in_sample_signed_pct = 0;
};

// Sources are PublishedRun::source. `runs` must outlive the result.
CrossValidation cross_validate(const cost::KernelsDb& db, const std::vector<PublishedRun>& runs);

// The runs' left-out errors as kernels_db/calibration.json holds them; `in_sample_error_pct` is
// each run's error under `db` as it is (the calibration check's), in the same order.
std::vector<cost::CalibrationResidual> residuals_of(const CrossValidation& cv,
                                                    const std::vector<double>& in_sample_error_pct);
// How often an estimate's range (estimate/uncertainty.hpp), set by the left-out errors of the
// other sources' runs, contains a run's published step time around its left-out prediction.
cost::ResidualsCoverage range_coverage(const cost::KernelsDb& db,
                                       const std::vector<cost::CalibrationResidual>& residuals,
                                       const CrossValidation& cv);

}  // namespace lumos::estimate
