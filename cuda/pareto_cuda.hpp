// Two-objective Pareto front computed on the GPU with Thrust, for batches whose results live
// there; identical to replay::pareto_front (CUDA-free header).
#pragma once
#include <cstdint>
#include <vector>

namespace lumos::cuda {

std::vector<uint32_t> pareto_front_2d_cuda(const std::vector<double>& o0,
                                           const std::vector<double>& o1);

}  // namespace lumos::cuda
