// CUDA backend of the batch replay, seen by host code through this CUDA-free header.
#pragma once
#include <cstdint>

#include "device_query.hpp"
#include "replay/batch_replay.hpp"

namespace lumos::cuda {

// Same results as replay::batch_replay_cpu (relative 1e-9). Variants are tiled when the state of
// the registers not kept in shared memory would not fit in device memory
// (replay::lanes_tile_variants);
// `max_tile_variants` > 0 caps a tile's width (tests use it to run many tiles). Throws
// InputError on an invalid batch and std::runtime_error on CUDA errors or when not even one
// variant fits. With `pricing`, GEMM nodes take the cost model's ratio for each variant's GPU
// (on the device). `critical_path` false: finish times alone (cp_compute_us, cp_comm_us left 0).
replay::BatchResult batch_replay_cuda(const graph::Graph& g, const replay::VariantBatch& b,
                                      const replay::GemmPricing* pricing = nullptr,
                                      uint32_t max_tile_variants = 0, bool critical_path = true);

}  // namespace lumos::cuda
