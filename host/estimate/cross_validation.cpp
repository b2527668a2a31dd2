#include "estimate/cross_validation.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/error.hpp"
#include "estimate/uncertainty.hpp"

namespace lumos::estimate {

namespace {

// The step time of a run with the constants given: the response's own estimate where no fitted
// constant applies (it does not depend on them), a fresh estimate otherwise.
double step_with(const RunResponse& r, const cost::KernelsDb& fitted) {
  if (r.constant < 0) return r.step_low_s;
  return run_estimate(r.run->request, fitted).estimate.step_time_us * 1e-6;
}

double error_pct(double step_s, double published_s) {
  return (step_s - published_s) / published_s * 100;
}

}  // namespace

CrossValidation cross_validate(const cost::KernelsDb& db, const std::vector<PublishedRun>& runs) {
  const std::vector<RunResponse> responses = run_responses(db, runs);
  CrossValidation cv;
  cv.in_sample = fit_constants(responses, [](size_t) { return true; });
  const cost::KernelsDb all = with_constants(db, cv.in_sample);
  for (const RunResponse& r : responses) {
    CrossValidatedRun c;
    c.run = r.run;
    c.published_step_s = r.published_step_s;
    c.in_sample_step_s = step_with(r, all);
    c.in_sample_error_pct = error_pct(c.in_sample_step_s, c.published_step_s);
    c.params = r.params;
    cv.runs.push_back(c);
    if (std::none_of(cv.sources.begin(), cv.sources.end(),
                     [&](const SourceError& s) { return s.source == r.run->source; })) {
      SourceError s;
      s.source = r.run->source;
      cv.sources.push_back(s);
    }
  }
  for (SourceError& s : cv.sources) {
    // The fit sees no run of the left-out source: neither its published times nor its estimates.
    s.constants =
        fit_constants(responses, [&](size_t i) { return responses[i].run->source != s.source; });
    cost::KernelsDb fold = with_constants(db, s.constants);
    // The replica skew is fitted on one source's runs alone: without them nothing sets it.
    const auto& skew_sources = replica_skew_fit_sources();
    if (std::find(skew_sources.begin(), skew_sources.end(), s.source) != skew_sources.end())
      fold = without_replica_skew(std::move(fold));
    for (size_t i = 0; i < responses.size(); ++i) {
      if (responses[i].run->source != s.source) continue;
      CrossValidatedRun& c = cv.runs[i];
      c.left_out_step_s = step_with(responses[i], fold);
      c.left_out_error_pct = error_pct(c.left_out_step_s, c.published_step_s);
      s.rows++;
      s.left_out_mean_abs_pct += std::fabs(c.left_out_error_pct);
      s.left_out_signed_pct += c.left_out_error_pct;
      s.in_sample_mean_abs_pct += std::fabs(c.in_sample_error_pct);
      s.in_sample_signed_pct += c.in_sample_error_pct;
    }
    cv.left_out_mean_abs_pct += s.left_out_mean_abs_pct;
    cv.left_out_signed_pct += s.left_out_signed_pct;
    cv.in_sample_mean_abs_pct += s.in_sample_mean_abs_pct;
    cv.in_sample_signed_pct += s.in_sample_signed_pct;
    for (double* x : {&s.left_out_mean_abs_pct, &s.left_out_signed_pct, &s.in_sample_mean_abs_pct,
                      &s.in_sample_signed_pct})
      *x /= s.rows;
  }
  const double n = static_cast<double>(std::max<size_t>(1, cv.runs.size()));
  for (double* x : {&cv.left_out_mean_abs_pct, &cv.left_out_signed_pct, &cv.in_sample_mean_abs_pct,
                    &cv.in_sample_signed_pct})
    *x /= n;
  return cv;
}

std::vector<cost::CalibrationResidual> residuals_of(
    const CrossValidation& cv, const std::vector<double>& in_sample_error_pct) {
  LUMOS_EXPECT(in_sample_error_pct.size() == cv.runs.size(),
               "residuals: one in-sample error per cross-validated run");
  std::vector<cost::CalibrationResidual> out;
  for (size_t i = 0; i < cv.runs.size(); ++i) {
    const CrossValidatedRun& c = cv.runs[i];
    cost::CalibrationResidual r;
    r.label = c.run->label;
    r.gpu = c.run->request.gpu;
    r.stack = c.run->request.cfg.stack;
    r.gpus = static_cast<double>(c.run->request.cfg.gpus());
    r.params = c.params;
    r.error_pct = in_sample_error_pct[i];
    r.source = c.run->source;
    r.has_left_out = true;
    r.left_out_error_pct = c.left_out_error_pct;
    out.push_back(r);
  }
  return out;
}

cost::ResidualsCoverage range_coverage(const cost::KernelsDb& db,
                                       const std::vector<cost::CalibrationResidual>& residuals,
                                       const CrossValidation& cv) {
  cost::KernelsDb with = db;
  with.residuals = residuals;
  cost::ResidualsCoverage out;
  for (const CrossValidatedRun& c : cv.runs) {
    const auto& q = c.run->request;
    // The run's own source is out of its range, as it was out of its fit.
    const StepRange r = step_range(with, q.gpu, q.cfg.stack, static_cast<double>(q.cfg.gpus()),
                                   c.params, c.left_out_step_s * 1e6, 5, c.run->source);
    if (!r.known) continue;
    out.rows++;
    const double published_us = c.published_step_s * 1e6;
    if (published_us >= r.low_us && published_us <= r.high_us) out.inside++;
  }
  return out;
}

}  // namespace lumos::estimate
