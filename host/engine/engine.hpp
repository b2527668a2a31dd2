// The batch engine seen from above: which backend runs a batch of variants. The only place in
// host code that knows whether the CUDA backend was built (lumos_engine links it when it was).
#pragma once
#include <string>
#include <vector>

#include "common/progress.hpp"
#include "replay/batch_replay.hpp"

namespace lumos::engine {

enum class Backend { kAuto, kReference, kCpu, kCuda };
Backend parse_backend(const std::string& s);  // auto, reference, cpu, cuda
const char* to_string(Backend b);

// Runs the batch on `backend`; auto takes the GPU when the CUDA backend is built and a GPU is
// visible, else the CPU. `pricing` (GEMM repricing per variant) applies on every backend.
// `critical_path` false: finish times alone on the CPU and CUDA backends (cp_compute_us and
// cp_comm_us left 0; the reference computes them anyway). On the CPU backend, `program` is the
// graph's compiled program when the caller has one (a sweep compiles it while building) and
// `cpu_threads` the threads of this batch (0: all cores; a sweep runs one batch per thread).
// `progress`: variants replayed, on the CPU backend (a GPU replays a batch in one launch).
replay::BatchResult batch_replay(const graph::Graph& g, const replay::VariantBatch& b,
                                 Backend backend, const replay::GemmPricing* pricing = nullptr,
                                 bool critical_path = true,
                                 const replay::ReplayProgram* program = nullptr,
                                 unsigned cpu_threads = 0, const ProgressFn& progress = {});

// The backend `backend` runs on: auto resolved (kCuda or kCpu); the others as they are.
Backend resolve(Backend backend);
// Which backend auto picks on this machine and why, for `lumos info`: "cuda (a GPU is
// visible)", "cpu (no GPU visible)" or "cpu (built without CUDA)".
std::string auto_backend_reason();

bool cuda_built();      // this lumos has the CUDA backend
bool cuda_available();  // built with CUDA and a GPU visible

// Lines that describe the CUDA backend and the visible GPUs (for `lumos info`).
std::vector<std::string> device_report();

}  // namespace lumos::engine
