#include "estimate/calibration_check.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.hpp"
#include "common/stats.hpp"

namespace lumos::estimate {

std::vector<CalibrationRow> calibration_rows(const cost::KernelsDb& db) {
  std::vector<CalibrationRow> rows;
  for (const auto& p : published_runs()) {
    const auto e = run_estimate(p.request, db).estimate;
    CalibrationRow r;
    r.run = &p;
    r.lumos_tflops_per_gpu = e.model_tflops_per_gpu;
    r.step_time_s = e.step_time_us * 1e-6;
    // A published rate is Megatron's model FLOPs per GPU per second: the same formula as lumos's.
    r.published_step_s =
        p.step_time_s > 0
            ? p.step_time_s
            : e.model_flops / (static_cast<double>(e.cfg.gpus()) * p.model_tflops_per_gpu * 1e12);
    r.error_pct = (r.step_time_s - r.published_step_s) / r.published_step_s * 100;
    r.published_tflops_per_gpu = e.model_tflops_per_gpu * r.step_time_s / r.published_step_s;
    r.breakdown = e.breakdown;
    r.fits = e.fits;
    r.params = static_cast<double>(
        model::parameter_counts(e.model, e.layout.padded_vocab).total(e.model.layers));
    rows.push_back(r);
  }
  return rows;
}

std::vector<CalibrationGroup> calibration_groups(const std::vector<CalibrationRow>& rows) {
  std::vector<CalibrationGroup> groups;
  for (const CalibrationRow& r : rows) {
    const std::string& gpu = r.run->request.gpu;
    const std::string& stack = r.run->request.cfg.stack;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const CalibrationGroup& g) {
      return g.gpu == gpu && g.stack == stack;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), CalibrationGroup{gpu, stack});
    it->rows++;
    it->mean_abs_error_pct += std::fabs(r.error_pct);
    it->signed_mean_error_pct += r.error_pct;
    it->max_abs_error_pct = std::max(it->max_abs_error_pct, std::fabs(r.error_pct));
  }
  for (CalibrationGroup& g : groups) {
    g.mean_abs_error_pct /= g.rows;
    g.signed_mean_error_pct /= g.rows;
  }
  return groups;
}

CalibrationCheck check_calibration(const cost::KernelsDb& db, int latency_runs,
                                   const ProgressFn& progress) {
  LUMOS_EXPECT(latency_runs >= 1, "calibration check: at least one timed estimate");
  CalibrationCheck c;
  c.rows = calibration_rows(db);
  c.groups = calibration_groups(c.rows);
  // Latency: llama3-405b, the largest preset, on 1024 GPUs in Megatron-Bridge's layout.
  const PublishedRun* largest = nullptr;
  for (const auto& p : published_runs())
    if (p.request.cfg.gpus() == 1024 && p.request.model.name == "llama3-405b" &&
        (!largest || p.request.cfg.gbs < largest->request.cfg.gbs))
      largest = &p;
  LUMOS_EXPECT(largest != nullptr,
               "calibration check: no 1024-GPU llama3-405b run among the published runs");
  std::vector<double> wall_s;
  Estimate last;
  for (int k = 0; k < latency_runs; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    last = run_estimate(largest->request, db).estimate;
    wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (progress) progress(wall_s.size(), static_cast<uint64_t>(latency_runs));
  }
  EstimateLatency& l = c.latency;
  l.options = largest->options;
  l.runs = latency_runs;
  l.median_s = median(wall_s);
  l.min_s = *std::min_element(wall_s.begin(), wall_s.end());
  l.max_s = *std::max_element(wall_s.begin(), wall_s.end());
  l.nodes = last.nodes;
  l.edges = last.edges;
  return c;
}

}  // namespace lumos::estimate
