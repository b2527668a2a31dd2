// The one handler behind LUMOS_CUDA_CHECK (common.cuh): a failed CUDA runtime call becomes a
// std::runtime_error that names the error, the statement and its place; main() decides the exit.
#include "common.cuh"

namespace lumos::cuda {

void cuda_fail(cudaError_t err, const char* stmt, const char* func, const char* file, int line) {
  throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                           cudaGetErrorString(err) + ") in " + func + " at " + file + ":" +
                           std::to_string(line) + ": " + stmt);
}

}  // namespace lumos::cuda
