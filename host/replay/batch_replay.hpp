// Batch replay: V variants of one graph at once (docs/design.md "Replay engines"). The CPU backend
// lives here; the CUDA backend in cuda/ behind a CUDA-free header; both use batch_update.hpp.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "common/progress.hpp"
#include "graph/graph.hpp"
#include "replay/gemm_table.hpp"
#include "replay/replay_program.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::replay {

struct BatchResult {
  std::string backend;
  uint32_t variants = 0;
  std::vector<double> makespan_us;                           // [variant]
  std::vector<std::vector<double>> step_us;                  // [step][variant], graph.steps order
  std::array<std::vector<double>, kNumNodeClasses> busy_us;  // [class][variant]: summed durations
  std::vector<std::vector<double>> resource_busy_us;  // [graph resource][variant], for energy
  // On exact ties the node that ends the replay (whose path these describe) is the first in the
  // replay program's order, which may not be the reference's; the makespan is the same.
  std::vector<double> cp_compute_us;  // [variant]: compute + memory on the critical path
  std::vector<double> cp_comm_us;     // [variant]: communication on it
  uint32_t max_live = 0;  // registers of the replay program (CPU backend), 0 when not compiled
  // CUDA backend: seconds its replay kernels took (CUDA events around each tile's launch), apart
  // from compiling, uploading and downloading; 0 on the other backends.
  double kernel_s = 0;
};

// Runs on the CPU with all cores over the graph's replay program (replay_program.hpp); variants
// are tiled so each thread's state is `tile` variants wide ([register][tile] planes). Throws
// InputError on an invalid batch.
// With `pricing`, GEMM nodes take the cost model's ratio for each variant's GPU.
// The CPU backend's tile (variants per thread) for a program whose working set is
// `hot_registers` (replay_program.hpp). Without the critical path a register is 8 bytes of state
// instead of 16.
uint32_t batch_cpu_tile(uint32_t hot_registers, uint32_t steps, uint32_t variants, unsigned threads,
                        bool critical_path = true);
// The same for graph `g`'s program, measuring its working set only when it can matter.
uint32_t batch_cpu_tile(const ReplayProgram& p, const graph::Graph& g, uint32_t variants,
                        unsigned threads, bool critical_path = true);

// `tile` 0 picks one from the program's size (state within a core's L2). `program`: the graph's
// compiled program when the caller keeps one for several launches, else compiled here.
// `critical_path` false: finish times only (makespan, steps, busy time), the path's composition
// (cp_compute_us, cp_comm_us) left 0, for callers that do not report it (sweeps). `progress`:
// variants replayed of the batch, after each tile.
BatchResult batch_replay_cpu(const graph::Graph& g, const VariantBatch& b, uint32_t tile = 0,
                             unsigned threads = 0, const GemmPricing* pricing = nullptr,
                             const ReplayProgram* program = nullptr, bool critical_path = true,
                             const ProgressFn& progress = {});

// The CUDA backend's kernel body (lanes_thread.hpp) over blocks of threads of a few variants
// each, started by the host launcher (common/launch.hpp): the device code as the GPU runs it, on
// the CPU, so that ctest holds it to the CPU backend on machines without a GPU.
// `critical_path` false: the finish-times-only kernel (cp_compute_us, cp_comm_us left 0).
// `max_shared_regs` caps the registers kept in shared memory (tests send the others to the
// global plane); `max_tile_variants` > 0 runs the batch in tiles of that width, as the CUDA
// backend does when device memory is short.
BatchResult batch_replay_device_body(const graph::Graph& g, const VariantBatch& b,
                                     const GemmPricing* pricing = nullptr,
                                     bool critical_path = true,
                                     uint32_t max_shared_regs = UINT32_MAX,
                                     uint32_t max_tile_variants = 0);

// Only the per-variant busy time per class (no replay): what every backend reports.
BatchResult batch_replay_cpu_busy(const graph::Graph& g, const VariantBatch& b,
                                  const GemmPricing* pricing);

// The reference replay run once per variant (for tests and as a backend).
BatchResult batch_replay_reference(const graph::Graph& g, const VariantBatch& b,
                                   const GemmPricing* pricing = nullptr);

}  // namespace lumos::replay
