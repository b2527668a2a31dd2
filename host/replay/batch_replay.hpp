// Batch replay: V variants of one graph at once (DESIGN.md "Replay engines"). The CPU backend
// lives here; the CUDA backend in cuda/ behind a CUDA-free header; both use batch_update.hpp.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::replay {

enum class Backend { kAuto, kReference, kCpu, kCuda };
Backend parse_backend(const std::string& s);  // auto, reference, cpu, cuda
const char* to_string(Backend b);

struct BatchResult {
  std::string backend;
  uint32_t variants = 0;
  std::vector<double> makespan_us;                           // [variant]
  std::vector<std::vector<double>> step_us;                  // [step][variant], graph.steps order
  std::array<std::vector<double>, kNumNodeClasses> busy_us;  // [class][variant]: summed durations
  std::vector<double> cp_compute_us;  // [variant]: compute + memory on the critical path
  std::vector<double> cp_comm_us;     // [variant]: communication on it
};

// Runs on the CPU with all cores; variants are tiled so each thread's state is `tile` variants
// wide ([node][tile] planes). Throws InputError on an invalid batch.
BatchResult batch_replay_cpu(const graph::Graph& g, const VariantBatch& b, uint32_t tile = 64,
                             unsigned threads = 0);

// The reference replay run once per variant (for tests and as a backend).
BatchResult batch_replay_reference(const graph::Graph& g, const VariantBatch& b);

// Dispatches: auto takes the GPU when one is present (and the CUDA backend is built).
BatchResult batch_replay(const graph::Graph& g, const VariantBatch& b, Backend backend);

bool cuda_backend_available();  // built with CUDA and a GPU visible

}  // namespace lumos::replay
