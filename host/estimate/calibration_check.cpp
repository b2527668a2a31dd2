#include "estimate/calibration_check.hpp"

#include <algorithm>
#include <chrono>

#include "common/error.hpp"
#include "common/stats.hpp"

namespace lumos::estimate {

CalibrationCheck check_calibration(const cost::KernelsDb& db, int latency_runs) {
  LUMOS_EXPECT(latency_runs >= 1, "calibration check: at least one timed estimate");
  CalibrationCheck c;
  for (const auto& p : published_runs()) {
    const auto e = run_estimate(p.request, db).estimate;
    c.rows.push_back(
        {&p, e.model_tflops_per_gpu, e.step_time_us * 1e-6,
         (e.model_tflops_per_gpu - p.model_tflops_per_gpu) / p.model_tflops_per_gpu * 100, e.fits});
  }
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
