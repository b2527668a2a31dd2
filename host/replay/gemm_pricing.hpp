// GEMM nodes priced per variant by the cost model: the traced kernel's duration scaled by the
// model's time on the variant's GPU over its time on the traced GPU (calibration error cancels).
// Shapes come from the launching operator's input dims (cost::cost_report).
#pragma once
#include <string>
#include <vector>

#include "cost/gemm_core.hpp"
#include "graph/graph.hpp"
#include "replay/batch_update.hpp"

namespace lumos::cost {
struct KernelsDb;
}
namespace lumos::trace {
struct EventTable;
}

namespace lumos::replay {

struct GemmPricing {
  std::vector<int32_t> node_key;             // per graph node: -1 when not priced
  std::vector<int64_t> shape;                // per key: m, n, k, batch
  std::vector<uint8_t> dtype;                // per key
  std::vector<double> traced_us;             // per key: model time on the traced GPU
  std::vector<cost::GemmCoreParams> params;  // [gpu * 5 + dtype]
  std::vector<uint16_t> variant_gpu;         // per variant
  uint32_t keys() const { return static_cast<uint32_t>(dtype.size()); }
  uint32_t priced_nodes() const;
  BatchGemmView view() const;
};

// Prices the GEMM nodes of `g` (built from `t`) for variants running on `variant_gpus` (one GPU
// name per variant) against `traced_gpu`. Shapes whose dtype a variant's GPU lacks stay unpriced.
GemmPricing gemm_pricing(const graph::Graph& g, const trace::EventTable& t,
                         const cost::KernelsDb& db, const std::string& traced_gpu,
                         const std::vector<std::string>& variant_gpus);

}  // namespace lumos::replay
