#include "whatif/gpu_variants.hpp"

#include "cost/collective_model.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::whatif {

using replay::VariantBatch;

VariantBatch variants_from_gpus(const cost::KernelsDb& db, const std::string& traced_gpu,
                                const std::vector<std::string>& target_gpus) {
  const cost::GpuSpec& from = db.gpu(traced_gpu);
  VariantBatch b = VariantBatch::identity(static_cast<uint32_t>(target_gpus.size()));
  const int bf16 = static_cast<int>(cost::Dtype::kBf16);
  for (uint32_t v = 0; v < b.count; ++v) {
    const cost::GpuSpec& to = db.gpu(target_gpus[v]);
    b.speed[static_cast<int>(graph::NodeClass::kCompute)][v] =
        static_cast<float>(*to.peak_tflops[bf16] / *from.peak_tflops[bf16]);
    b.speed[static_cast<int>(graph::NodeClass::kMemory)][v] =
        static_cast<float>(to.hbm_gbps / from.hbm_gbps);
    b.speed[static_cast<int>(graph::NodeClass::kComm)][v] =
        static_cast<float>(to.nccl_nvlink_total_gbps() / from.nccl_nvlink_total_gbps());
    b.labels.push_back(to.name);
  }
  return b;
}

float comm_factor_for_group(const cost::KernelsDb& db, const std::string& gpu_name, double bytes,
                            int traced_ranks, int ranks, int ranks_per_node) {
  const cost::GpuSpec& gpu = db.gpu(gpu_name);
  const cost::Topology& topo = db.default_topology_for(gpu);
  const double t0 =
      cost::collective_time(db, gpu, topo,
                            {cost::Collective::kAllReduce, bytes, traced_ranks, ranks_per_node})
          .time_us;
  const double t1 = cost::collective_time(
                        db, gpu, topo, {cost::Collective::kAllReduce, bytes, ranks, ranks_per_node})
                        .time_us;
  return static_cast<float>(t0 / t1);
}

}  // namespace lumos::whatif
