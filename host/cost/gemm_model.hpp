// GEMM time by (M, N, K, dtype) on a GPU: tile and wave quantization over the SMs, an efficiency
// surface fitted to published figures, a memory-bound floor, and measured points that override
// the fit for exactly those shapes (kernels_db/gemm.json).
#pragma once
#include <string>

#include "cost/gemm_core.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::cost {

struct GemmQuery {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;  // independent GEMMs of this shape (bmm)
  Dtype dtype = Dtype::kBf16;
  // A forward pass's GEMM. With FP8 its operands are both E4M3 (the hybrid format keeps
  // gradients in E5M2), and FP8 recipes run it with fast accumulation (fp8_fprop_speedup).
  bool fprop = false;
};

struct GemmEstimate {
  double time_us = 0;
  double tflops = 0;   // achieved: 2*M*N*K*batch / time
  std::string method;  // "tiled 128x256 (3 waves)", "stream-K", "memory-bound", "measured point"
  bool memory_bound = false;  // bound by its operands' HBM traffic, not the tensor cores
};

// Throws InputError for non-positive sizes or a dtype the GPU lacks. With use_points, a
// measured point of exactly this GPU, dtype and shape replaces the fit.
GemmEstimate gemm_time(const KernelsDb& db, const GpuSpec& gpu, const GemmQuery& q,
                       bool use_points = true);

// What an FP8 recipe's forward GEMMs gain on `gpu` over gemm_time's FP8 estimate, which is for
// split accumulation: the architecture's fast-accumulation speed-up where the recipe runs its
// forward GEMMs with fast accumulation, else 1.
double fp8_fprop_speedup(const KernelsDb& db, const GpuSpec& gpu, const Fp8Recipe& recipe);

// The architecture's FP8 fast-accumulation speed-up over split accumulation (gemm.json), 1 where
// it has none: what a forward FP8 GEMM of a recipe that accumulates fast gains on `gpu`.
double fp8_fast_accum_speedup(const KernelsDb& db, const GpuSpec& gpu);

// The fitted model's parameters for one GPU and dtype (what gemm_core_time takes).
GemmCoreParams gemm_core_params(const KernelsDb& db, const GpuSpec& gpu, Dtype dtype);

}  // namespace lumos::cost
