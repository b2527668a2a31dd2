#include "cost/collective_topology.hpp"

#include "common/error.hpp"
#include "cost/size_units.hpp"

namespace lumos::cost {

Topology collective_topology(const KernelsDb& db, const GpuSpec& gpu,
                             const std::optional<std::string>& name, const NicOverrides& nic) {
  Topology topo = name ? db.topology(*name) : db.default_topology_for(gpu);
  if (nic.gbytes_per_s) topo.nic_gbps = *nic.gbytes_per_s;
  if (nic.per_gpu) topo.nics_per_gpu = *nic.per_gpu;
  if (nic.efficiency) topo.nic_efficiency = *nic.efficiency;
  LUMOS_EXPECT(topo.nic_gbps >= kMinGbytesPerS && topo.nic_gbps <= kMaxGbytesPerS,
               "lumos cost collective: NIC line rate must be between 1 Mb/s and 10 TB/s");
  LUMOS_EXPECT(topo.nics_per_gpu > 0 && topo.nic_efficiency > 0 && topo.nic_efficiency <= 1,
               "lumos cost collective: NIC count must be positive and efficiency in (0, 1]");
  return topo;
}

}  // namespace lumos::cost
