// Chooses the batch backend. Compiled into lumos_engine, which links the CUDA backend when the
// build has one, so host-only code never depends on CUDA.
#include "common/error.hpp"
#include "engine/engine.hpp"

#ifdef LUMOS_HAS_CUDA
#include "batch_replay_cuda.hpp"
#include "device_query.hpp"
#endif

namespace lumos::engine {

Backend parse_backend(const std::string& s) {
  if (s == "auto") return Backend::kAuto;
  if (s == "reference") return Backend::kReference;
  if (s == "cpu") return Backend::kCpu;
  if (s == "cuda") return Backend::kCuda;
  throw InputError("backend '" + s + "': expected auto, reference, cpu or cuda");
}

const char* to_string(Backend b) {
  switch (b) {
    case Backend::kAuto:
      return "auto";
    case Backend::kReference:
      return "reference";
    case Backend::kCpu:
      return "cpu";
    case Backend::kCuda:
      return "cuda";
  }
  return "?";
}

bool cuda_built() {
#ifdef LUMOS_HAS_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_available() {
#ifdef LUMOS_HAS_CUDA
  return cuda::gpu_present();
#else
  return false;
#endif
}

Backend resolve(Backend backend) {
  if (backend != Backend::kAuto) return backend;
  return cuda_available() ? Backend::kCuda : Backend::kCpu;
}

std::string auto_backend_reason() {
  if (!cuda_built()) return "cpu (built without CUDA)";
  return cuda_available() ? "cuda (a GPU is visible)" : "cpu (no GPU visible)";
}

replay::BatchResult batch_replay(const graph::Graph& g, const replay::VariantBatch& b,
                                 Backend backend, const replay::GemmPricing* pricing,
                                 bool critical_path, const replay::ReplayProgram* program,
                                 unsigned cpu_threads, const ProgressFn& progress) {
  switch (resolve(backend)) {
    case Backend::kReference:
      return replay::batch_replay_reference(g, b, pricing);
    case Backend::kCuda:
#ifdef LUMOS_HAS_CUDA
      LUMOS_EXPECT(cuda::gpu_present(), "backend cuda: no GPU is visible to the CUDA runtime");
      return cuda::batch_replay_cuda(g, b, pricing, 0, critical_path);
#else
      throw InputError("backend cuda: this lumos was built without CUDA (nvcc was not found)");
#endif
    case Backend::kCpu:
    case Backend::kAuto:
      break;
  }
  return replay::batch_replay_cpu(g, b, 0, cpu_threads, pricing, program, critical_path, progress);
}

std::vector<std::string> device_report() {
  std::vector<std::string> out;
#ifdef LUMOS_HAS_CUDA
  const auto devs = cuda::visible_devices();
  out.push_back("CUDA backend: built (runtime " + std::to_string(cuda::runtime_version()) + "); " +
                std::to_string(devs.size()) + " GPU(s) visible");
  for (const auto& d : devs)
    out.push_back("  GPU " + std::to_string(d.index) + ": " + d.name + ", " +
                  std::to_string(d.sm_count) + " SMs, sm_" + std::to_string(d.compute_major) +
                  std::to_string(d.compute_minor) + ", " + std::to_string(d.memory_bytes >> 20) +
                  " MiB");
#else
  out.push_back("CUDA backend: not built (no nvcc at configure time)");
#endif
  return out;
}

}  // namespace lumos::engine
