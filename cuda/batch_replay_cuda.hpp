// CUDA backend of the batch replay, seen by host code through this CUDA-free header.
#pragma once
#include "replay/batch_replay.hpp"

namespace lumos::cuda {

// True when the CUDA runtime sees at least one GPU.
bool gpu_present();

// Same results as replay::batch_replay_cpu (relative 1e-6). Variants are tiled when the
// [node][variant] state would not fit in device memory. Throws std::runtime_error on CUDA errors.
// With `pricing`, GEMM nodes take the cost model's ratio for each variant's GPU (on the device).
replay::BatchResult batch_replay_cuda(const graph::Graph& g, const replay::VariantBatch& b,
                                      const replay::GemmPricing* pricing = nullptr);

}  // namespace lumos::cuda
