// Marks functions that host code and CUDA kernels share (one cost model, one replay update).
// Expands to plain inline for a host compiler, so headers using it stay CUDA-free.
#pragma once
#if defined(__CUDACC__)
#define LUMOS_HD __host__ __device__ __forceinline__
#else
#define LUMOS_HD inline
#endif
