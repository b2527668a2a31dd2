// The device half of common/launch.hpp: `launch_blocks_device(...)` runs body(block, thread,
// shared) as a CUDA kernel, with the same `__host__ __device__` body that the host launcher runs
// in ctest without a GPU.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace lumos::cuda {

template <class Body>
__global__ void launch_blocks_kernel(Body body) {
  extern __shared__ double lumos_block_shared[];  // 8-byte aligned, as the host launcher's
  body(blockIdx.x, threadIdx.x, reinterpret_cast<char*>(lumos_block_shared));
}

// The device half of launch_blocks (common/launch.hpp): `blocks` blocks of `block_threads`
// threads with `shared_bytes` of dynamic shared memory each (above 48 KiB by opt-in).
template <class Body>
void launch_blocks_device(uint32_t blocks, uint32_t block_threads, uint64_t shared_bytes,
                          const Body& body, cudaStream_t stream) {
  if (blocks == 0) return;
  if (shared_bytes > 48 * 1024)
    LUMOS_CUDA_CHECK(cudaFuncSetAttribute(launch_blocks_kernel<Body>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared_bytes)));
  launch_blocks_kernel<<<blocks, block_threads, shared_bytes, stream>>>(body);
  LUMOS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lumos::cuda
