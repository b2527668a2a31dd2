// CUDA-free view of the GPUs this process can see. Host code includes this header only when
// the build has CUDA (LUMOS_HAS_CUDA); it carries no CUDA types.
#pragma once
#include <string>
#include <vector>

namespace lumos::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_count = 0;
  int compute_major = 0, compute_minor = 0;
  size_t memory_bytes = 0;
};

// True when the CUDA runtime sees at least one GPU (never throws).
bool gpu_present();

// Devices visible to the CUDA runtime; empty when there is no GPU or no driver. Throws
// std::runtime_error only when a device that is visible cannot be queried.
std::vector<DeviceInfo> visible_devices();

// Runtime version the library was built against, e.g. 13000.
int runtime_version();

}  // namespace lumos::cuda
