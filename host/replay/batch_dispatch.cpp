// Chooses the batch backend. Compiled into lumos_engine, which links the CUDA backend when the
// build has one, so host-only code never depends on CUDA.
#include "common/error.hpp"
#include "replay/batch_replay.hpp"

#ifdef LUMOS_HAS_CUDA
#include "batch_replay_cuda.hpp"
#endif

namespace lumos::replay {

bool cuda_backend_available() {
#ifdef LUMOS_HAS_CUDA
  return cuda::gpu_present();
#else
  return false;
#endif
}

BatchResult batch_replay(const graph::Graph& g, const VariantBatch& b, Backend backend,
                         const GemmPricing* pricing) {
  if (backend == Backend::kAuto)
    backend = cuda_backend_available() ? Backend::kCuda : Backend::kCpu;
  switch (backend) {
    case Backend::kReference:
      return batch_replay_reference(g, b);
    case Backend::kCpu:
      return batch_replay_cpu(g, b);
    case Backend::kCuda:
#ifdef LUMOS_HAS_CUDA
      LUMOS_EXPECT(cuda::gpu_present(), "backend cuda: no GPU is visible to the CUDA runtime");
      return cuda::batch_replay_cuda(g, b, pricing);
#else
      throw InputError("backend cuda: this lumos was built without CUDA (nvcc was not found)");
#endif
    case Backend::kAuto:
      break;
  }
  return batch_replay_cpu(g, b, 64, 0, pricing);
}

}  // namespace lumos::replay
