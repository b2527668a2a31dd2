// Variants as slot tables (DESIGN.md "Variants and slots"): every node names a slot, and a
// variant gives each slot a factor on the node's traced duration. The host computes the table
// once per batch (the cost model asked once per slot and variant, not per node); the engines
// then only multiply: duration(n, v) = traced(n) x factor[slot(n)][v].
//
// Slots of a traced graph today: one per node class (the class's speed factor, as a reciprocal)
// and one per GEMM shape the trace gives (the cost model's time on the variant's GPU over its
// time on the traced GPU).
#pragma once
#include <cstdint>
#include <vector>

#include "graph/graph.hpp"
#include "replay/gemm_table.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::replay {

struct SlotTable {
  uint32_t slots = 0, variants = 0;
  std::vector<uint32_t> node_slot;  // [node]
  std::vector<double> factor;       // [slot][variant]
  const double* row(uint32_t slot) const {
    return factor.data() + static_cast<uint64_t>(slot) * variants;
  }
};

// Throws InputError on an invalid batch (VariantBatch::validate).
SlotTable slot_table(const graph::Graph& g, const VariantBatch& b,
                     const GemmPricing* pricing = nullptr);

}  // namespace lumos::replay
