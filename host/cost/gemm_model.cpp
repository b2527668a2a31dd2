#include "cost/gemm_model.hpp"

#include <cmath>
#include <limits>

#include "common/error.hpp"

namespace lumos::cost {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

GemmEstimate gemm_time(const KernelsDb& db, const GpuSpec& gpu, const GemmQuery& q,
                       bool use_points) {
  LUMOS_EXPECT(q.m > 0 && q.n > 0 && q.k > 0 && q.batch > 0,
               "gemm: M, N, K and batch must be positive (got " + std::to_string(q.m) + "x" +
                   std::to_string(q.n) + "x" + std::to_string(q.k) + ")");
  const auto& peak = gpu.peak_tflops[static_cast<int>(q.dtype)];
  LUMOS_EXPECT(peak.has_value(),
               "gemm: " + gpu.name + " has no " + to_string(q.dtype) + " tensor cores");
  const GemmParams& p = db.gemm;
  const double flops = 2.0 * static_cast<double>(q.m) * q.n * q.k * q.batch;
  GemmEstimate out;
  if (use_points) {
    for (const GemmPoint& pt : p.points) {
      if (pt.dtype == q.dtype && pt.m == q.m && pt.n == q.n && pt.k == q.k &&
          db.gpu(pt.gpu).name == gpu.name) {
        out.tflops = pt.tflops;
        out.time_us = flops / (pt.tflops * 1e6);
        out.method = "measured point (" + pt.source + ")";
        return out;
      }
    }
  }
  auto fr_it = p.peak_fraction.find(gpu.arch);
  LUMOS_EXPECT(
      fr_it != p.peak_fraction.end() && fr_it->second[static_cast<int>(q.dtype)].has_value(),
      "kernels_db/gemm.json: no peak_fraction for " + std::string(to_string(gpu.arch)) + " " +
          to_string(q.dtype));
  const double eff = *fr_it->second[static_cast<int>(q.dtype)];
  const double k_eff = static_cast<double>(q.k) / (q.k + p.k_half.at(gpu.arch));
  const double per_sm_flops_us = *peak * 1e6 / gpu.sms;  // FLOP per µs per SM at peak
  double best = std::numeric_limits<double>::infinity();
  // 1. Tiled kernels: each wave runs one tile per SM.
  for (const GemmTile& t : p.tiles) {
    const int64_t ctas = ceil_div(q.m, t.tm) * ceil_div(q.n, t.tn) * q.batch;
    const int64_t waves = ceil_div(ctas, gpu.sms);
    const double wave_us = 2.0 * t.tm * t.tn * q.k / (per_sm_flops_us * eff * t.efficiency * k_eff);
    const double us = waves * wave_us;
    if (us < best) {
      best = us;
      out.method = "tiled " + std::to_string(t.tm) + "x" + std::to_string(t.tn) + " (" +
                   std::to_string(waves) + (waves == 1 ? " wave)" : " waves)");
    }
  }
  // 2. Stream-K: the padded work of the first tile shape spread evenly over all SMs.
  {
    const GemmTile& t = p.tiles.front();
    const double work =
        2.0 * ceil_div(q.m, t.tm) * t.tm * ceil_div(q.n, t.tn) * t.tn * q.k * q.batch;
    const double us = work / (per_sm_flops_us * gpu.sms * eff * p.streamk_efficiency * k_eff) +
                      p.streamk_fixup_us;
    if (us < best) {
      best = us;
      out.method = "stream-K";
    }
  }
  // Shapes that break 16-byte alignment fall back to slower kernels.
  const int64_t align = 16 / bytes_of(q.dtype);
  if (q.n % align != 0 || q.k % align != 0) {
    best /= p.misaligned_factor;
    out.method += ", misaligned";
  }
  const double bytes = (static_cast<double>(q.m) * q.k + static_cast<double>(q.k) * q.n +
                        static_cast<double>(q.m) * q.n) *
                       bytes_of(q.dtype) * q.batch;
  const double mem_us = bytes / (gpu.hbm_gbps * 1e3 * p.hbm_fraction);
  if (mem_us > best) {
    best = mem_us;
    out.method = "memory-bound";
  }
  out.time_us = best + p.floor_us;
  out.tflops = flops / (out.time_us * 1e6);
  return out;
}

}  // namespace lumos::cost
