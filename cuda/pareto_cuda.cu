// Pareto front of two minimised objectives on the GPU: the Thrust algorithm of pareto_thrust.hpp
// with Thrust's CUDA device system, in an NVTX range, CUDA errors checked.
#include "common.cuh"
#include "pareto_cuda.hpp"
#include "pareto_thrust.hpp"

namespace lumos::cuda {

std::vector<uint32_t> pareto_front_2d_cuda(const std::vector<double>& o0,
                                           const std::vector<double>& o1) {
  NvtxRange range("lumos::cuda::pareto_front_2d");
  std::vector<uint32_t> front = pareto_front_2d_thrust(o0, o1);
  LUMOS_CUDA_CHECK(cudaGetLastError());
  return front;
}

}  // namespace lumos::cuda
