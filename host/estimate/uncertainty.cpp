#include "estimate/uncertainty.hpp"

#include <algorithm>
#include <cmath>

#include "common/format.hpp"

namespace lumos::estimate {

namespace {

StepRange left_out_band(const cost::KernelsDb& db, const std::string& gpu, const std::string& stack,
                        double step_us, const std::string& exclude_source) {
  StepRange out;
  std::vector<const cost::CalibrationResidual*> pool;
  std::string group;
  // Narrowest first: a GPU and stack's own runs say most about it, when there are enough.
  for (int scope = 0; scope < 3 && static_cast<int>(pool.size()) < kMinBandRuns; ++scope) {
    pool.clear();
    for (const auto& r : db.residuals)
      if (r.has_left_out && r.source != exclude_source && (scope == 2 || r.gpu == gpu) &&
          (scope >= 1 || r.stack == stack))
        pool.push_back(&r);
    group = scope == 0 ? gpu + "/" + stack : scope == 1 ? gpu : "every GPU";
  }
  // Widening fills a GPU's band up; it does not lend one to a GPU no published run was on.
  const auto on_gpu = std::count_if(db.residuals.begin(), db.residuals.end(), [&](const auto& r) {
    return r.has_left_out && r.source != exclude_source && r.gpu == gpu;
  });
  if (on_gpu < 2 || pool.size() < 2 || step_us <= 0) {
    out.basis = "fewer than two published runs on " + gpu + " to set a range from";
    return out;
  }
  std::vector<double> abs_pct;
  for (const auto* r : pool) {
    abs_pct.push_back(std::fabs(r->left_out_error_pct));
    out.runs.push_back(r->label);
  }
  std::sort(abs_pct.begin(), abs_pct.end());
  const double at = kBandQuantile * static_cast<double>(abs_pct.size() - 1);
  const size_t i = static_cast<size_t>(at);
  const double q_pct =
      i + 1 < abs_pct.size() ? abs_pct[i] + (abs_pct[i + 1] - abs_pct[i]) * (at - i) : abs_pct[i];
  const double q = std::min(q_pct, 90.0) / 100;  // a step time is positive
  out.known = true;
  out.low_us = step_us / (1 + q);
  out.high_us = step_us / (1 - q);
  out.basis =
      strprintf("the 90th percentile (%.1f%%) of the left-out errors of %zu published runs on %s",
                q_pct, pool.size(), group.c_str());
  if (db.coverage.rows > 0)
    out.basis += strprintf("; such ranges held %d of %d runs in cross-validation",
                           db.coverage.inside, db.coverage.rows);
  return out;
}

}  // namespace

StepRange step_range(const cost::KernelsDb& db, const std::string& gpu, const std::string& stack,
                     double gpus, double params, double step_us, int nearest,
                     const std::string& exclude_source) {
  if (std::any_of(db.residuals.begin(), db.residuals.end(),
                  [](const auto& r) { return r.has_left_out; }))
    return left_out_band(db, gpu, stack, step_us, exclude_source);
  StepRange out;
  std::vector<const cost::CalibrationResidual*> pool;
  for (const auto& r : db.residuals)
    if (r.gpu == gpu && r.stack == stack) pool.push_back(&r);
  std::string group = gpu + "/" + stack;
  if (pool.size() < 2 && db.stacks.count(stack)) {
    // Stacks that run the same attention and the same kind of kernels (megatron-core and
    // nemo-2025, say) err alike.
    const cost::StackSpec& want = db.stack(stack);
    pool.clear();
    for (const auto& r : db.residuals) {
      auto it = db.stacks.find(r.stack);
      if (r.gpu == gpu && it != db.stacks.end() && it->second.attention == want.attention &&
          it->second.fused_kernels == want.fused_kernels)
        pool.push_back(&r);
    }
    group = gpu + " (similar stacks)";
  }
  if (pool.size() < 2 || step_us <= 0 || gpus <= 0 || params <= 0) {
    out.basis = "fewer than two published runs on " + gpu + " to set a range from";
    return out;
  }
  auto distance = [&](const cost::CalibrationResidual* r) {
    return std::fabs(std::log(gpus / r->gpus)) + std::fabs(std::log(params / r->params));
  };
  std::stable_sort(pool.begin(), pool.end(),
                   [&](const auto* a, const auto* b) { return distance(a) < distance(b); });
  pool.resize(std::min(pool.size(), static_cast<size_t>(std::max(2, nearest))));
  out.known = true;
  out.low_us = out.high_us = step_us;
  for (const auto* r : pool) {
    const double t = step_us / (1 + r->error_pct / 100);
    out.low_us = std::min(out.low_us, t);
    out.high_us = std::max(out.high_us, t);
    out.runs.push_back(r->label);
  }
  out.basis = strprintf("%zu published %s runs", pool.size(), group.c_str());
  return out;
}

}  // namespace lumos::estimate
