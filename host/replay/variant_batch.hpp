// A batch of configuration variants of one graph structure, as structure-of-arrays: for each
// node class, the factor by which that class runs faster in each variant (2 = twice as fast).
// GPU type, network bandwidth and collective group sizes enter through the cost model, which
// turns them into these factors (variants_from_gpus, comm_factor_for_group).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace lumos::cost {
struct KernelsDb;
}

namespace lumos::replay {

constexpr int kNumNodeClasses = 5;  // graph::NodeClass

struct VariantBatch {
  uint32_t count = 0;
  // speed[c][v]: durations of class c are divided by it in variant v (1 = as traced).
  std::array<std::vector<float>, kNumNodeClasses> speed;
  std::vector<std::string> labels;  // optional, one per variant

  static VariantBatch identity(uint32_t count);
  // Throws InputError when a factor is not positive and finite or sizes disagree.
  void validate() const;
};

// Variants that move the traced step onto other GPUs: compute scales with the dense bf16 peak,
// memory-bound work with HBM bandwidth, communication with NCCL's NVLink bandwidth (kernels_db).
VariantBatch variants_from_gpus(const cost::KernelsDb& db, const std::string& traced_gpu,
                                const std::vector<std::string>& target_gpus);

// Speed factor of collectives when a group of `traced_ranks` becomes `ranks` (all-reduce of
// `bytes`, the NCCL model's time ratio; below 1 when the larger group is slower).
float comm_factor_for_group(const cost::KernelsDb& db, const std::string& gpu, double bytes,
                            int traced_ranks, int ranks, int ranks_per_node);

}  // namespace lumos::replay
