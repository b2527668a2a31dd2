// Variants as slot tables (docs/design.md "Variants and slots"): every node names a slot, and a
// variant gives each slot a factor on the node's traced duration, computed on the host once per
// batch (the cost model asked once per slot and GPU, not per node); the engines then only
// multiply: duration(n, v) = traced(n) x factor(slot(n), v).
//
// Slots: one per node class (the reciprocal of the class's speed factor, per variant); one per
// kernel kind of a model-built graph when the batch gives their durations (the node's own
// duration is then 1, so the factor is the duration); and one per GEMM shape the trace gives
// (the cost model's time on the variant's GPU over its time on the traced GPU), plus two ratio
// slots (attention at the GPUs' matrix rates, memory-bound kernels at their HBM bandwidths).
// Class and model slots are rows of one [row][variant] table. A priced factor depends on the
// variant only through its GPU column (a GPU and a compute speed axis factor), so it is kept per
// (slot, column): the table grows with variants by 5 doubles and a column index each, however
// many shapes there are.
#pragma once
#include <cstdint>
#include <vector>

#include "common/hd.hpp"
#include "graph/graph.hpp"
#include "replay/gemm_table.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::replay {

// The table as the engines read it (raw arrays; also on the device).
struct SlotView {
  const uint32_t* node_slot = nullptr;    // [node]
  const double* row_factor = nullptr;     // [row][variant]: the classes, then the model slots
  const double* gemm_factor = nullptr;    // [shape][gpu]
  const uint16_t* variant_gpu = nullptr;  // [variant], null without GEMM slots
  uint32_t variants = 0, gpus = 0;
  uint32_t rows = kNumNodeClasses;  // slots below it are rows; the GEMM shapes follow

  LUMOS_HD double factor(uint32_t slot, uint32_t v) const {
    return slot < rows ? row_factor[static_cast<uint64_t>(slot) * variants + v]
                       : gemm_factor[static_cast<uint64_t>(slot - rows) * gpus + variant_gpu[v]];
  }
};

struct SlotTable {
  uint32_t slots = 0, variants = 0, gpus = 0, rows = kNumNodeClasses;
  std::vector<uint32_t> node_slot;
  std::vector<double> row_factor;
  std::vector<double> gemm_factor;
  std::vector<uint16_t> variant_gpu;
  // The durations the factors multiply: the graph's, with 1 for the nodes of model slots.
  std::vector<double> base_us;
  SlotView view() const {
    return {node_slot.data(),
            row_factor.data(),
            gemm_factor.empty() ? nullptr : gemm_factor.data(),
            variant_gpu.empty() ? nullptr : variant_gpu.data(),
            variants,
            gpus,
            rows};
  }
  // Duration of node n in variant v.
  double duration_us(graph::NodeId n, uint32_t v) const {
    return base_us[n] * view().factor(node_slot[n], v);
  }
};

// Throws InputError on an invalid batch (VariantBatch::validate).
SlotTable slot_table(const graph::Graph& g, const VariantBatch& b,
                     const GemmPricing* pricing = nullptr);

}  // namespace lumos::replay
