#include "estimate/uncertainty.hpp"

#include <algorithm>
#include <cmath>

#include "common/format.hpp"

namespace lumos::estimate {

StepRange step_range(const cost::KernelsDb& db, const std::string& gpu, const std::string& stack,
                     double gpus, double params, double step_us, int nearest) {
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
