#include "estimate/constant_fit.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "estimate/published_runs_2025.hpp"

namespace lumos::estimate {

const std::vector<FittedConstant>& fitted_constants() {
  // kernels_db/stacks.json: megatron-deepspeed runs Megatron-LM 2021's layer kernels (its BLOOM
  // run stays out of the fit, a check), and nemo-2024 and megatron-core the kernels of NeMo's
  // recipes; NeMo 24.x's rows (nemo-2024: the delayed FP8 recipe) are fitted with nemo-2025's.
  static const std::vector<FittedConstant> constants = {
      {"megatron-2021", {"megatron-2021", "megatron-deepspeed"}, {"megatron-2021"}},
      {"nemo-2025", {"nemo-2025", "nemo-2024", "megatron-core"}, {"nemo-2025", "nemo-2024"}},
  };
  return constants;
}

double RunResponse::step_at(double value) const {
  return step_low_s + (step_high_s - step_low_s) * (value - kFitLow) / (kFitHigh - kFitLow);
}

namespace {

int constant_of(const std::string& stack) {
  const auto& cs = fitted_constants();
  for (size_t i = 0; i < cs.size(); ++i)
    if (std::find(cs[i].applies_to.begin(), cs[i].applies_to.end(), stack) !=
        cs[i].applies_to.end())
      return static_cast<int>(i);
  return -1;
}

cost::KernelsDb with_value(cost::KernelsDb db, int constant, double value) {
  for (const std::string& s : fitted_constants()[constant].applies_to)
    if (db.stacks.count(s)) db.stacks[s].kernel_time_factor = value;
  return db;
}

}  // namespace

std::vector<RunResponse> run_responses(const cost::KernelsDb& db,
                                       const std::vector<PublishedRun>& runs) {
  std::vector<cost::KernelsDb> low, high;
  for (size_t c = 0; c < fitted_constants().size(); ++c) {
    low.push_back(with_value(db, static_cast<int>(c), kFitLow));
    high.push_back(with_value(db, static_cast<int>(c), kFitHigh));
  }
  std::vector<RunResponse> out;
  for (const PublishedRun& p : runs) {
    RunResponse r;
    r.run = &p;
    r.constant = constant_of(p.request.cfg.stack);
    const Estimate e = run_estimate(p.request, r.constant < 0 ? db : low[r.constant]).estimate;
    r.step_low_s = r.step_high_s = e.step_time_us * 1e-6;
    if (r.constant >= 0)
      r.step_high_s = run_estimate(p.request, high[r.constant]).estimate.step_time_us * 1e-6;
    r.params = static_cast<double>(
        model::parameter_counts(e.model, e.layout.padded_vocab).total(e.model.layers));
    // A published rate is Megatron's model FLOPs per GPU per second, which no constant changes.
    r.published_step_s =
        p.step_time_s > 0
            ? p.step_time_s
            : e.model_flops / (static_cast<double>(e.cfg.gpus()) * p.model_tflops_per_gpu * 1e12);
    out.push_back(r);
  }
  return out;
}

std::vector<ConstantValue> fit_constants(const std::vector<RunResponse>& responses,
                                         const std::function<bool(size_t)>& use) {
  std::vector<ConstantValue> out;
  for (size_t c = 0; c < fitted_constants().size(); ++c) {
    ConstantValue v;
    v.stack = fitted_constants()[c].stack;
    // Signed mean error (step/published - 1) is linear in the value: zero it in closed form.
    double at_low = 0, slope = 0;
    for (size_t i = 0; i < responses.size(); ++i) {
      const RunResponse& r = responses[i];
      const std::vector<std::string>& on = fitted_constants()[c].fitted_on;
      if (r.constant != static_cast<int>(c) || r.run->tier != "A" ||
          std::find(on.begin(), on.end(), r.run->request.cfg.stack) == on.end() || !use(i))
        continue;
      at_low += r.step_low_s / r.published_step_s - 1;
      slope += (r.step_high_s - r.step_low_s) / (kFitHigh - kFitLow) / r.published_step_s;
      v.fit_rows++;
    }
    if (v.fit_rows > 0) {
      LUMOS_EXPECT(slope > 0, "constant fit: the step time of " + v.stack +
                                  "'s runs does not grow with its kernel_time_factor");
      v.value = std::clamp(kFitLow - at_low / slope, 0.5, 2.0);
    }
    out.push_back(v);
  }
  return out;
}

const std::vector<std::string>& replica_skew_fit_sources() {
  static const std::vector<std::string> sources = {kDgxcSource};
  return sources;
}

cost::KernelsDb without_replica_skew(cost::KernelsDb db) {
  for (auto& [name, recipe] : db.fp8_recipes) recipe.replica_skew_us = 0;
  for (auto& [name, stack] : db.stacks) stack.fp8.replica_skew_us = 0;
  return db;
}

cost::KernelsDb with_constants(cost::KernelsDb db, const std::vector<ConstantValue>& values) {
  for (size_t c = 0; c < values.size(); ++c)
    db = with_value(std::move(db), static_cast<int>(c), values[c].value);
  return db;
}

}  // namespace lumos::estimate
