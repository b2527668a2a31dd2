// GEMM nodes priced per variant by the cost model, as the batch engines read it: for each
// priced node a shape key, for each key its shape, dtype and model time on the traced GPU, and
// for each variant the GPU it runs on. A priced node's duration is its traced one times the
// model's time on the variant's GPU over its time on the traced GPU (calibration error cancels).
// whatif::gemm_pricing builds it from a trace.
#pragma once
#include <cstdint>
#include <vector>

#include "cost/dtype.hpp"
#include "cost/gemm_core.hpp"
#include "replay/batch_update.hpp"

namespace lumos::replay {

struct GemmPricing {
  std::vector<int32_t> node_key;             // per graph node: -1 when not priced
  std::vector<int64_t> shape;                // per key: m, n, k, batch
  std::vector<uint8_t> dtype;                // per key
  std::vector<double> traced_us;             // per key: model time on the traced GPU
  std::vector<cost::GemmCoreParams> params;  // [gpu * kNumDtypes + dtype]
  std::vector<uint16_t> variant_gpu;         // per variant
  // Keys of dtype kRatioKey (batch_update.hpp) price other kernels by a ratio per GPU column.
  std::vector<double> ratio;  // [key * gpus + gpu]; empty when no key is a ratio key
  // A column's speed-up of every priced node: a grid's compute speed axis, since the priced
  // nodes are compute kernels and their column's factor replaces the class's; empty: 1.
  std::vector<double> gpu_speed;  // [gpu]
  // FP8 forward GEMMs run with fast accumulation (docs/design.md, "FP8 fast accumulation"): a
  // key marked here takes, where compute-bound, its column's speed-up over the split
  // accumulation the model's FP8 figures are for. Both empty: none.
  std::vector<uint8_t> fast_accum;         // per key: 1 for an FP8 forward GEMM
  std::vector<double> fast_accum_speedup;  // [gpu]
  uint32_t keys() const { return static_cast<uint32_t>(dtype.size()); }
  uint32_t gpus() const { return static_cast<uint32_t>(params.size() / cost::kNumDtypes); }
  uint32_t priced_nodes() const;       // by any key
  uint32_t priced_gemm_nodes() const;  // by a GEMM shape
  BatchGemmView view() const;
  // Throws InputError unless every table agrees in size and every index and value the engines
  // read is in range (slot_table() calls it, so every backend and the reference check it).
  void validate(uint32_t nodes, uint32_t variants) const;
};

}  // namespace lumos::replay
