// The grid of a what-if: the traced step on each target GPU, times every speed axis (a Cartesian
// product), as one batch of variants with the GPU each variant runs on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "replay/variant_batch.hpp"
#include "whatif/speed_axes.hpp"

namespace lumos::cost {
struct KernelsDb;
}

namespace lumos::whatif {

// A grid is evaluated in one launch: at most this many variants, and at most this many node
// updates (variants x graph nodes): 15-60 s on two cores at the CPU backend's measured 4e8-1.4e9
// node-variants/s (docs/benchmarks.md "Batch replay engine": 250,000 variants x 84K nodes in 15 s).
constexpr uint64_t kMaxGridVariants = 10'000'000;
constexpr double kMaxGridNodeVariants = 2e10;

struct Grid {
  replay::VariantBatch batch;            // labels say "gpu axis x factor ..."
  std::vector<std::string> variant_gpu;  // kernels_db name of each variant's GPU
  std::vector<double> compute_speed;     // each variant's compute speed axis factor (1: none)
};

// The GPU axis as users write it: comma-separated kernels_db names (empty items skipped).
// Throws InputError, prefixed by `option`, when it names no GPU.
std::vector<std::string> parse_gpu_axis(const std::string& spec, const std::string& option);

// Throws InputError for an unknown GPU, an empty GPU list, or a grid above kMaxGridVariants or
// (over a graph of `graph_nodes` nodes) kMaxGridNodeVariants, before building anything.
Grid build_grid(const cost::KernelsDb& db, const std::string& traced_gpu,
                const std::vector<std::string>& gpus, const std::vector<SpeedAxis>& axes,
                uint64_t graph_nodes);

}  // namespace lumos::whatif
