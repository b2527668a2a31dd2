// The energy of a trace's replayed steps on a GPU, by how each kernel draws power (carbon/
// energy.hpp): the one pricing `lumos carbon --trace` and `lumos whatif` share. Each measures
// the kernels' busy time its own way (per node as one replay ran them, or per variant from a
// batch replay's class sums) and hands it here.
#pragma once
#include <vector>

#include "carbon/energy.hpp"

namespace lumos::cost {
struct KernelsDb;
}
namespace lumos::graph {
struct Graph;
}
namespace lumos::replay {
struct BatchResult;
struct GemmPricing;
struct VariantBatch;
}  // namespace lumos::replay

namespace lumos::carbon {

// Kernel time by how it draws power: matrix arithmetic (kernels kernels_db classifies gemm, conv
// or attention), the other compute kernels, memory copies and sets, and communication.
struct TracedBusy {
  double matrix_us = 0, other_compute_us = 0, copy_us = 0, comm_us = 0;
};

// One GPU's energy over one step of `step_us`, its kernels busy for `busy` summed over
// `gpu_steps` GPU-steps (ranks x steps): matrix kernels draw as compute-bound work, the other
// compute kernels and copies as memory-bound work.
EnergyParts trace_step_energy(const cost::GpuSpec& gpu, const cost::CarbonParams& p, double pue,
                              double step_us, const TracedBusy& busy, double gpu_steps = 1);

// Per node: whether it is a kernel of matrix arithmetic, which draws power as compute-bound work.
std::vector<bool> matrix_kernels(const graph::Graph& g, const cost::KernelsDb& db);

// A trace's kernel time inside its steps, summed over ranks and steps. Each kernel's duration is
// its traced one, or its entry in `dur_us` (one per node: a what-if's, as replayed).
TracedBusy traced_kernel_busy_us(const graph::Graph& g, const cost::KernelsDb& db,
                                 const std::vector<double>* dur_us = nullptr);

// Per variant of a batch replay of `g`: its kernel time over the whole replay. The matrix
// kernels' time is their traced one by the compute class's speed-up, or by their priced key's
// factor on the variant's GPU column (`pricing`; the factors are taken per key and column, not
// per variant: no second slot table of the grid), at most the compute class's replayed time;
// the rest of that is the other compute kernels'.
std::vector<TracedBusy> batch_kernel_busy_us(const graph::Graph& g, const cost::KernelsDb& db,
                                             const replay::VariantBatch& batch,
                                             const replay::BatchResult& r,
                                             const replay::GemmPricing& pricing);

}  // namespace lumos::carbon
