// The topology a collective is priced on: a named one of kernels_db/nccl.json or the GPU's
// default, with the NIC figures overridden where asked.
#pragma once
#include <optional>
#include <string>

#include "cost/kernels_db.hpp"

namespace lumos::cost {

struct NicOverrides {
  std::optional<double> gbytes_per_s;  // NIC line rate, GB/s (bytes: 400 Gb/s is 50)
  std::optional<int> per_gpu;          // NICs per GPU
  std::optional<double> efficiency;    // achieved fraction of the line rate
};

// No `name`: the GPU's default topology. Throws InputError for an unknown topology, a NIC
// rate outside [1 Mb/s, 10 TB/s], a NIC count that is not positive, or an efficiency outside
// (0, 1].
Topology collective_topology(const KernelsDb& db, const GpuSpec& gpu,
                             const std::optional<std::string>& name, const NicOverrides& nic);

}  // namespace lumos::cost
