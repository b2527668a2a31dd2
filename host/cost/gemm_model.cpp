#include "cost/gemm_model.hpp"

#include <cmath>
#include <limits>

#include "common/error.hpp"

namespace lumos::cost {

GemmEstimate gemm_time(const KernelsDb& db, const GpuSpec& gpu, const GemmQuery& q,
                       bool use_points) {
  LUMOS_EXPECT(
      q.m > 0 && q.n > 0 && q.k > 0 && q.batch > 0 && q.m <= (int64_t{1} << 31) &&
          q.n <= (int64_t{1} << 31) && q.k <= (int64_t{1} << 31) && q.batch <= (int64_t{1} << 24),
      "gemm: M, N, K must be in 1..2^31 and batch in 1..2^24 (got " + std::to_string(q.m) + "x" +
          std::to_string(q.n) + "x" + std::to_string(q.k) + " x" + std::to_string(q.batch) + ")");
  const auto& peak = gpu.peak_tflops[static_cast<int>(q.dtype)];
  LUMOS_EXPECT(peak.has_value(),
               "gemm: " + gpu.name + " has no " + to_string(q.dtype) + " tensor cores");
  const GemmParams& p = db.gemm;
  const double flops = 2.0 * static_cast<double>(q.m) * q.n * q.k * q.batch;
  GemmEstimate out;
  if (use_points) {
    for (const GemmPoint& pt : p.points) {
      if (pt.dtype == q.dtype && pt.m == q.m && pt.n == q.n && pt.k == q.k && pt.batch == q.batch &&
          pt.gpu == gpu.name) {
        out.tflops = pt.tflops;
        out.time_us = flops / (pt.tflops * 1e6);
        out.method = "measured point (" + pt.source + ")";
        return out;
      }
    }
  }
  const GemmCoreParams core = gemm_core_params(db, gpu, q.dtype);
  const GemmCoreResult r = gemm_core_time(core, q.m, q.n, q.k, q.batch);
  if (r.method >= 0) {
    out.method = "tiled " + std::to_string(core.tm[r.method]) + "x" +
                 std::to_string(core.tn[r.method]) + " (" + std::to_string(r.waves) +
                 (r.waves == 1 ? " wave)" : " waves)");
  } else {
    out.method = r.method == kStreamK ? "stream-K" : "memory-bound";
    out.memory_bound = r.method == kMemoryBound;
  }
  if (r.misaligned && r.method != kMemoryBound) out.method += ", misaligned";
  out.time_us = r.time_us;
  out.tflops = flops / (out.time_us * 1e6);
  return out;
}

double fp8_fprop_speedup(const KernelsDb& db, const GpuSpec& gpu, const Fp8Recipe& recipe) {
  return recipe.fprop_fast_accum ? fp8_fast_accum_speedup(db, gpu) : 1;
}

double fp8_fast_accum_speedup(const KernelsDb& db, const GpuSpec& gpu) {
  const auto it = db.gemm.fp8_fast_accum_speedup.find(gpu.arch);
  return it == db.gemm.fp8_fast_accum_speedup.end() ? 1 : it->second;
}

GemmCoreParams gemm_core_params(const KernelsDb& db, const GpuSpec& gpu, Dtype dtype) {
  const GemmParams& p = db.gemm;
  const auto& peak = gpu.peak_tflops[static_cast<int>(dtype)];
  LUMOS_EXPECT(peak.has_value(),
               "gemm: " + gpu.name + " has no " + to_string(dtype) + " tensor cores");
  auto fr_it = p.peak_fraction.find(gpu.arch);
  LUMOS_EXPECT(fr_it != p.peak_fraction.end() && fr_it->second[static_cast<int>(dtype)].has_value(),
               "kernels_db/gemm.json: no peak_fraction for " + std::string(to_string(gpu.arch)) +
                   " " + to_string(dtype));
  LUMOS_EXPECT(p.tiles.size() <= static_cast<size_t>(kMaxGemmTiles),
               "kernels_db/gemm.json: at most " + std::to_string(kMaxGemmTiles) + " tiles");
  GemmCoreParams c;
  // A power-capped part runs its tensor cores at a lower clock (GpuSpec::matrix_clock_fraction).
  c.per_sm_flops_us = *peak * 1e6 / gpu.sms * gpu.matrix_clock_fraction;
  c.sms = gpu.sms;
  c.peak_fraction = *fr_it->second[static_cast<int>(dtype)];
  c.k_half = p.k_half.at(gpu.arch);
  c.tiles = static_cast<int>(p.tiles.size());
  for (int i = 0; i < c.tiles; ++i)
    c.tm[i] = p.tiles[i].tm, c.tn[i] = p.tiles[i].tn, c.tile_efficiency[i] = p.tiles[i].efficiency;
  c.streamk_efficiency = p.streamk_efficiency;
  c.streamk_fixup_us = p.streamk_fixup_us;
  c.hbm_bytes_per_us = gpu.hbm_gbps * 1e3 * p.hbm_fraction;
  c.floor_us = p.floor_us;
  c.misaligned_factor = p.misaligned_factor;
  c.elem_bytes = bytes_of(dtype);
  // BF16 and FP16 run on the same tensor-core paths at the same peak: one ceiling for both.
  auto is16 = [](Dtype d) { return d == Dtype::kBf16 || d == Dtype::kFp16; };
  // A capped part without a ceiling of its own takes its full-clock part's, at its clock.
  double own = 0, borrowed = 0;
  for (const GemmPoint& pt : p.points)
    if (pt.ceiling && (pt.dtype == dtype || (is16(pt.dtype) && is16(dtype)))) {
      if (pt.gpu == gpu.name) own = pt.tflops * 1e6;
      if (!gpu.full_clock_part.empty() && pt.gpu == gpu.full_clock_part)
        borrowed = pt.tflops * 1e6 * gpu.matrix_clock_fraction;
    }
  c.ceiling_flops_us = own > 0 ? own : borrowed;
  return c;
}

}  // namespace lumos::cost
