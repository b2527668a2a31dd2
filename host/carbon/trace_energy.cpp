#include "carbon/trace_energy.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "common/error.hpp"
#include "cost/kernel_classifier.hpp"
#include "cost/kernels_db.hpp"
#include "graph/graph.hpp"
#include "replay/batch_replay.hpp"
#include "replay/gemm_table.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::carbon {

EnergyParts trace_step_energy(const cost::GpuSpec& gpu, const cost::CarbonParams& p, double pue,
                              double step_us, const TracedBusy& busy, double gpu_steps) {
  return step_energy(gpu, p, pue, step_us, busy.matrix_us / gpu_steps,
                     (busy.other_compute_us + busy.copy_us) / gpu_steps, busy.comm_us / gpu_steps);
}

std::vector<bool> matrix_kernels(const graph::Graph& g, const cost::KernelsDb& db) {
  std::vector<bool> out(g.num_nodes(), false);
  std::map<uint32_t, bool> matrix;  // by kernel name
  for (graph::NodeId n = 1; n < g.num_nodes(); ++n) {
    if (g.kind[n] != graph::NodeKind::kKernel) continue;
    auto it = matrix.find(g.name[n]);
    if (it == matrix.end()) {
      const std::string c = cost::classify_kernel(db, g.names[g.name[n]]);
      it = matrix.emplace(g.name[n], c == "gemm" || c == "conv" || c.rfind("attention", 0) == 0)
               .first;
    }
    out[n] = it->second;
  }
  return out;
}

TracedBusy traced_kernel_busy_us(const graph::Graph& g, const cost::KernelsDb& db,
                                 const std::vector<double>* dur_us) {
  LUMOS_EXPECT(!dur_us || dur_us->size() == g.num_nodes(), "energy: one duration per graph node");
  TracedBusy b;
  const std::vector<bool> matrix = matrix_kernels(g, db);
  for (graph::NodeId n = 1; n < g.num_nodes(); ++n) {
    if (g.step[n] < 0 || g.kind[n] != graph::NodeKind::kKernel) continue;
    const double us = dur_us ? (*dur_us)[n] : g.dur_us[n];
    switch (g.cls[n]) {
      case graph::NodeClass::kComm:
        b.comm_us += us;
        continue;
      case graph::NodeClass::kMemory:
        b.copy_us += us;
        continue;
      default:
        break;
    }
    (matrix[n] ? b.matrix_us : b.other_compute_us) += us;
  }
  return b;
}

std::vector<TracedBusy> batch_kernel_busy_us(const graph::Graph& g, const cost::KernelsDb& db,
                                             const replay::VariantBatch& batch,
                                             const replay::BatchResult& r,
                                             const replay::GemmPricing& pricing) {
  const std::vector<bool> matrix = matrix_kernels(g, db);
  const bool priced = pricing.priced_nodes() > 0;
  double unpriced_us = 0;                                        // by the compute class's speed
  std::vector<double> key_us(priced ? pricing.keys() : 0, 0.0);  // by each key's factor
  for (graph::NodeId n = 1; n < g.num_nodes(); ++n) {
    if (!matrix[n] || g.cls[n] != graph::NodeClass::kCompute) continue;
    const int32_t k = priced ? pricing.node_key[n] : -1;
    (k >= 0 ? key_us[static_cast<size_t>(k)] : unpriced_us) += g.dur_us[n];
  }
  const uint32_t columns = priced ? pricing.gpus() : 0;
  std::vector<double> column_us(columns, 0.0);  // the priced matrix time on each GPU column
  const replay::BatchGemmView gemm = pricing.view();
  for (uint32_t k = 0; k < key_us.size(); ++k)
    if (key_us[k] > 0)
      for (uint32_t gi = 0; gi < columns; ++gi)
        column_us[gi] += key_us[k] * replay::gemm_key_factor(gemm, static_cast<int32_t>(k), gi);
  const int compute_cls = static_cast<int>(graph::NodeClass::kCompute);
  std::vector<TracedBusy> out(batch.count);
  for (uint32_t v = 0; v < batch.count; ++v) {
    const double compute = r.busy_us[compute_cls][v];
    double matrix_us = unpriced_us / static_cast<double>(batch.speed[compute_cls][v]);
    if (priced) matrix_us += column_us[pricing.variant_gpu[v]];
    out[v].matrix_us = std::min(matrix_us, compute);
    out[v].other_compute_us = compute - out[v].matrix_us;
    out[v].copy_us = r.busy_us[static_cast<int>(graph::NodeClass::kMemory)][v];
    out[v].comm_us = r.busy_us[static_cast<int>(graph::NodeClass::kComm)][v];
  }
  return out;
}

}  // namespace lumos::carbon
