// The one way device-style kernels start, the host launcher: cuda/launch.cuh starts the same
// body as a CUDA kernel, so a kernel body written once (`__host__ __device__`, CUDA-free headers)
// runs in ctest on machines without a GPU and for real on one.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "common/thread_pool.hpp"

namespace lumos {

// Blocks of threads with a block's shared memory: body(block, thread, shared) for every thread
// of `blocks` blocks of `block_threads`, each block's threads given the same `shared_bytes`
// buffer (8-byte aligned). Bodies never synchronize (no barrier exists on either side), so a
// block's threads run one after another here; blocks are shared out over all cores.
// cuda/launch.cuh starts the same body as a kernel with dynamic shared memory.
template <class Body>
void launch_blocks(uint32_t blocks, uint32_t block_threads, uint64_t shared_bytes, const Body& body,
                   unsigned threads = 0) {
  std::atomic<uint32_t> next{0};
  run_workers(std::min<unsigned>(worker_threads(static_cast<int>(threads)), std::max(1u, blocks)),
              [&]() {
                const size_t words = (shared_bytes + 7) / 8;
                std::unique_ptr<double[]> shared(new double[words]);
                for (uint32_t b; (b = next.fetch_add(1)) < blocks;) {
                  // A block's shared memory starts undefined on a GPU: all bits set here (NaN
                  // for doubles and floats), so that a read of a word no thread of the block
                  // wrote shows in tests instead of an earlier block's value.
                  std::memset(shared.get(), 0xff, words * sizeof(double));
                  for (uint32_t t = 0; t < block_threads; ++t)
                    body(b, t, reinterpret_cast<char*>(shared.get()));
                }
              });
}

}  // namespace lumos
