// Enumerates visible GPUs for `lumos info` and for choosing a replay backend.
#include "common.cuh"
#include "device_query.hpp"

namespace lumos::cuda {

bool gpu_present() {
  int n = 0;
  // No driver or no device is an answer here, not an error.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

std::vector<DeviceInfo> visible_devices() {
  NvtxRange range("lumos::cuda::visible_devices");
  std::vector<DeviceInfo> out;
  int count = 0;
  // No driver or no device is an answer here, not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    LUMOS_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.sm_count = p.multiProcessorCount;
    d.compute_major = p.major;
    d.compute_minor = p.minor;
    d.memory_bytes = p.totalGlobalMem;
    out.push_back(d);
  }
  return out;
}

int runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

}  // namespace lumos::cuda
