#include "model/slowest_gpu.hpp"

#include <cmath>
#include <map>
#include <mutex>

namespace lumos::model {

namespace {

// The GPUs of a node the spread is published over (stas00's mamf-finder-all-gpus.py: one node).
constexpr int64_t kNodeGpus = 8;

// E[max] = integral of x n phi(x) Phi(x)^(n-1) dx, by the midpoint rule over [-12, 12]: the
// integrand is smooth and negligible outside for every n this model meets (up to 2^40).
double integrate_expected_max(int64_t n) {
  constexpr double kLo = -12, kHi = 12, kStep = 1e-3;
  const double nd = static_cast<double>(n);
  double sum = 0;
  for (double x = kLo + kStep / 2; x < kHi; x += kStep) {
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    if (cdf <= 0) continue;
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    sum += x * nd * pdf * std::exp((nd - 1) * std::log(cdf));
  }
  return sum * kStep;
}

}  // namespace

double expected_max_of_normals(int64_t n) {
  if (n <= 1) return 0;
  // Sweeps price thousands of layouts of a few job sizes: remember each size's integral.
  static std::mutex mu;
  static std::map<int64_t, double> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  const double e = integrate_expected_max(n);
  cache.emplace(n, e);
  return e;
}

double slowest_gpu_matrix_factor(const cost::GpuSpec& gpu, int64_t gpus) {
  if (gpu.matmul_spread <= 0 || gpus <= 1) return 1;
  // A node's spread, (fastest - slowest) / fastest, is its expected range: 2 e_8 deviations.
  const double sigma = gpu.matmul_spread / (2 * expected_max_of_normals(kNodeGpus));
  return 1 / (1 - sigma * expected_max_of_normals(gpus));
}

}  // namespace lumos::model
