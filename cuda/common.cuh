// Shared by every .cu file: the one CUDA error check and the NVTX range used by launchers.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#if __has_include(<nvtx3/nvToolsExt.h>) && !defined(LUMOS_DISABLE_NVTX)
#include <nvtx3/nvToolsExt.h>
#define LUMOS_HAS_NVTX 1
#endif

namespace lumos::cuda {

[[noreturn]] void cuda_fail(cudaError_t err, const char* stmt, const char* func, const char* file,
                            int line);

// Opens one named range for the lifetime of the object (host side only).
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
#ifdef LUMOS_HAS_NVTX
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#ifdef LUMOS_HAS_NVTX
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace lumos::cuda

#define LUMOS_CUDA_CHECK(stmt)                                                   \
  do {                                                                           \
    const cudaError_t lumos_err_ = (stmt);                                       \
    if (lumos_err_ != cudaSuccess)                                               \
      ::lumos::cuda::cuda_fail(lumos_err_, #stmt, __func__, __FILE__, __LINE__); \
  } while (0)
