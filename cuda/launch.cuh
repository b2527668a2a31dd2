// The device half of common/launch.hpp: `launch_threads_device(count, body, stream)` runs
// body(i) for i in [0, count) as a CUDA kernel, one GPU thread per index, with the same
// `__host__ __device__` body that the host launcher runs in ctest without a GPU.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace lumos::cuda {

template <class Body>
__global__ void launch_threads_kernel(Body body, uint32_t count) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) body(i);
}

template <class Body>
void launch_threads_device(uint32_t count, const Body& body, cudaStream_t stream) {
  constexpr uint32_t kBlock = 128;  // the host launcher's block too
  if (count == 0) return;
  launch_threads_kernel<<<ceil_div(count, kBlock), kBlock, 0, stream>>>(body, count);
  LUMOS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lumos::cuda
