// Marks functions that host code and CUDA kernels share (one cost model, one replay update).
// Expands to plain inline for a host compiler, so headers using it stay CUDA-free.
#pragma once
#if defined(__CUDACC__)
#define LUMOS_HD __host__ __device__ __forceinline__
#else
#define LUMOS_HD inline
#endif

// Keeps a loop rolled in device code (nvcc unrolls loops with a runtime trip count by four, with
// remainder code that a loop of one or two iterations pays in full); nothing for a host compiler.
#if defined(__CUDACC__)
#define LUMOS_NO_UNROLL _Pragma("unroll 1")
#else
#define LUMOS_NO_UNROLL
#endif
