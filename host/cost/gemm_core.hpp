// The fitted GEMM model as plain data and one function, callable from host code and from CUDA
// kernels (the batch replay prices GEMMs per variant on the device). gemm_model.cpp builds the
// parameters from kernels_db and adds the measured points and the explanations around it.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"

namespace lumos::cost {

constexpr int kMaxGemmTiles = 4;

struct GemmCoreParams {
  double per_sm_flops_us = 0;  // peak FLOP per µs per SM for the dtype
  int sms = 1;
  double peak_fraction = 1;
  double k_half = 0;
  int tiles = 0;
  int tm[kMaxGemmTiles] = {}, tn[kMaxGemmTiles] = {};
  double tile_efficiency[kMaxGemmTiles] = {};
  double streamk_efficiency = 1, streamk_fixup_us = 0;
  double hbm_bytes_per_us = 1;  // peak bandwidth x achieved fraction
  double floor_us = 0;
  double misaligned_factor = 1;
  int elem_bytes = 2;
  double ceiling_flops_us = 0;  // > 0: the GPU's maximum achievable rate (MAMF), FLOP per µs
};

// How the winning estimate was made: tile index (0..tiles-1), kStreamK or kMemoryBound.
constexpr int kStreamK = -1, kMemoryBound = -2;

struct GemmCoreResult {
  double time_us = 0;
  int method = 0;
  int64_t waves = 0;
  bool misaligned = false;
};

LUMOS_HD int64_t gemm_ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

LUMOS_HD GemmCoreResult gemm_core_time(const GemmCoreParams& p, int64_t m, int64_t n, int64_t k,
                                       int64_t batch) {
  GemmCoreResult r;
  const double k_eff = static_cast<double>(k) / (static_cast<double>(k) + p.k_half);
  double best = 1e300;
  // 1. Tiled kernels: each wave runs one tile per SM.
  for (int i = 0; i < p.tiles; ++i) {
    const int64_t ctas = gemm_ceil_div(m, p.tm[i]) * gemm_ceil_div(n, p.tn[i]) * batch;
    const int64_t waves = gemm_ceil_div(ctas, p.sms);
    const double us = static_cast<double>(waves) * 2.0 * p.tm[i] * p.tn[i] *
                      static_cast<double>(k) /
                      (p.per_sm_flops_us * p.peak_fraction * p.tile_efficiency[i] * k_eff);
    if (us < best) best = us, r.method = i, r.waves = static_cast<int64_t>(waves);
  }
  // 2. Stream-K: the padded work of the first tile shape spread evenly over all SMs.
  if (p.tiles > 0) {
    const double work = 2.0 * static_cast<double>(gemm_ceil_div(m, p.tm[0]) * p.tm[0]) *
                        static_cast<double>(gemm_ceil_div(n, p.tn[0]) * p.tn[0]) *
                        static_cast<double>(k) * static_cast<double>(batch);
    const double us =
        work / (p.per_sm_flops_us * p.sms * p.peak_fraction * p.streamk_efficiency * k_eff) +
        p.streamk_fixup_us;
    if (us < best) best = us, r.method = kStreamK;
  }
  // Nothing beats the best rate a brute-force sweep of shapes found.
  if (p.ceiling_flops_us > 0) {
    const double at_ceiling = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                              static_cast<double>(k) * static_cast<double>(batch) /
                              p.ceiling_flops_us;
    if (at_ceiling > best) best = at_ceiling;
  }
  // Shapes that break 16-byte alignment fall back to slower kernels.
  const int64_t align = 16 / p.elem_bytes;
  if (n % align != 0 || k % align != 0) best /= p.misaligned_factor, r.misaligned = true;
  const double bytes =
      (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n) *
      p.elem_bytes * static_cast<double>(batch);
  const double mem_us = bytes / p.hbm_bytes_per_us;
  if (mem_us > best) best = mem_us, r.method = kMemoryBound;
  r.time_us = best + p.floor_us;
  return r;
}

}  // namespace lumos::cost
