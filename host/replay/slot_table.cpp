#include "replay/slot_table.hpp"

#include <algorithm>
#include <cstddef>

#include "common/error.hpp"
#include "cost/dtype.hpp"
#include "cost/gemm_core.hpp"

namespace lumos::replay {

SlotTable slot_table(const graph::Graph& g, const VariantBatch& b, const GemmPricing* pricing) {
  b.validate(g.num_nodes());
  if (pricing) pricing->validate(g.num_nodes(), b.count);
  SlotTable t;
  const uint32_t keys = pricing ? pricing->keys() : 0;
  const bool model = !b.node_slot.empty();
  t.rows = kNumNodeClasses + (model ? b.slots : 0);
  t.slots = t.rows + keys;
  t.variants = b.count;
  // Each node's slot and base written in one pass (a sweep builds a table per batch), not
  // through a copy of the graph's durations first.
  const uint32_t n_nodes = g.num_nodes();
  t.node_slot.resize(n_nodes);
  t.base_us.resize(n_nodes);
  uint32_t* const node_slot = t.node_slot.data();
  double* const base_us = t.base_us.data();
  for (graph::NodeId n = 0; n < n_nodes; ++n) {
    if (model && b.node_slot[n] != VariantBatch::kNoSlot) {
      node_slot[n] = kNumNodeClasses + b.node_slot[n];
      base_us[n] = 1.0;  // the slot's factor is the duration
    } else {
      node_slot[n] = pricing && pricing->node_key[n] >= 0
                         ? t.rows + static_cast<uint32_t>(pricing->node_key[n])
                         : static_cast<uint32_t>(g.cls[n]);
      base_us[n] = g.dur_us[n];
    }
  }
  t.row_factor.resize(static_cast<size_t>(t.rows) * b.count);
  for (int c = 0; c < kNumNodeClasses; ++c)
    for (uint32_t v = 0; v < b.count; ++v)
      t.row_factor[static_cast<size_t>(c) * b.count + v] = 1.0 / static_cast<double>(b.speed[c][v]);
  std::copy(b.slot_us.begin(), b.slot_us.end(),
            t.row_factor.begin() + static_cast<std::ptrdiff_t>(kNumNodeClasses) * b.count);
  if (keys == 0) return t;
  t.gpus = static_cast<uint32_t>(pricing->params.size() / cost::kNumDtypes);
  t.variant_gpu = pricing->variant_gpu;
  t.gemm_factor.resize(static_cast<size_t>(keys) * t.gpus);
  const BatchGemmView view = pricing->view();
  std::vector<bool> read(keys, false);  // keys some node is priced by
  for (int32_t k : pricing->node_key)
    if (k >= 0) read[static_cast<size_t>(k)] = true;
  for (uint32_t k = 0; k < keys; ++k) {
    if (!read[k]) continue;  // factor 0, never read
    for (uint32_t gi = 0; gi < t.gpus; ++gi) {
      LUMOS_EXPECT(
          pricing->dtype[k] == kRatioKey ||
              pricing->params[gi * cost::kNumDtypes + pricing->dtype[k]].per_sm_flops_us > 0,
          "batch replay: a priced GEMM's dtype has no parameters on one of its GPUs");
      const double f = gemm_key_factor(view, static_cast<int32_t>(k), gi);
      LUMOS_EXPECT(f > 0 && f < 1e300,
                   "batch replay: a priced key's factor on a GPU is not a positive number");
      t.gemm_factor[static_cast<size_t>(k) * t.gpus + gi] = f;
    }
  }
  return t;
}

}  // namespace lumos::replay
