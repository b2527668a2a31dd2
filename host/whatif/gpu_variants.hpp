// Variants from hardware: the traced step moved onto other GPUs, collectives on other group
// sizes. The cost model turns each into per-class speed factors of the batch engine.
#pragma once
#include <string>
#include <vector>

#include "replay/variant_batch.hpp"

namespace lumos::cost {
struct KernelsDb;
}

namespace lumos::whatif {

// Variants that move the traced step onto other GPUs: compute scales with the dense bf16 peak,
// memory-bound work with HBM bandwidth, communication with NCCL's NVLink bandwidth (kernels_db).
replay::VariantBatch variants_from_gpus(const cost::KernelsDb& db, const std::string& traced_gpu,
                                        const std::vector<std::string>& target_gpus);

// Speed factor of collectives when a group of `traced_ranks` becomes `ranks` (all-reduce of
// `bytes`, the NCCL model's time ratio; below 1 when the larger group is slower).
float comm_factor_for_group(const cost::KernelsDb& db, const std::string& gpu, double bytes,
                            int traced_ranks, int ranks, int ranks_per_node);

}  // namespace lumos::whatif
