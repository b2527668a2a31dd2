// The one way device-style kernels start: `launch_threads(count, body)` runs body(i) for every
// thread index i in [0, count). This is the host launcher: the indices are shared out over all
// cores in contiguous blocks. cuda/launch.cuh starts the same body as a CUDA kernel, one GPU thread
// per index, so a kernel body written once (`__host__ __device__`, CUDA-free headers) runs in
// ctest on machines without a GPU and for real on one.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "common/thread_pool.hpp"

namespace lumos {

template <class Body>
void launch_threads(uint32_t count, const Body& body, unsigned threads = 0) {
  constexpr uint32_t kBlock = 128;  // indices per claim, as a GPU block
  const uint32_t blocks = (count + kBlock - 1) / kBlock;
  std::atomic<uint32_t> next{0};
  run_workers(std::min<unsigned>(worker_threads(static_cast<int>(threads)), std::max(1u, blocks)),
              [&]() {
                for (uint32_t b; (b = next.fetch_add(1)) < blocks;)
                  for (uint32_t i = b * kBlock; i < std::min(count, (b + 1) * kBlock); ++i) body(i);
              });
}

}  // namespace lumos
