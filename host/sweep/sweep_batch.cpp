#include "sweep/sweep_batch.hpp"

#include "common/error.hpp"
#include "sweep/batch_fold.hpp"

namespace lumos::sweep {

SlotBatch slot_batch(const model::StepGraph& sg, const std::vector<const model::StepCosts*>& costs,
                     const std::vector<model::ClassSpeeds>& speeds, FoldPowers* powers,
                     const std::vector<std::vector<double>>* params) {
  LUMOS_EXPECT(costs.size() == speeds.size() && !costs.empty() &&
                   (!params || params->size() == costs.size()),
               "sweep batch: one speed per configuration, at least one configuration");
  SlotBatch out;
  replay::VariantBatch& b = out.batch;
  b = replay::VariantBatch::identity(static_cast<uint32_t>(costs.size()));
  b.node_slot = sg.node_slots();
  b.slots = static_cast<uint32_t>(sg.slots.size());
  b.slot_us.resize(static_cast<size_t>(b.slots) * b.count);
  b.busy = false;  // the rows' busy time is `out.busy`, from the model's kernel counts
  // The kernel kinds' durations of each configuration from a graph of the same slots without
  // its folds; the folds' matrices then for all configurations at once (batch_fold.hpp).
  model::StepGraph kinds;
  kinds.slots = sg.slots;
  kinds.slot_class = sg.slot_class;
  for (uint32_t v = 0; v < b.count; ++v) {
    for (int c = 0; c < replay::kNumNodeClasses; ++c) b.speed[c][v] = speeds[v][c];
    const std::vector<double> d =
        model::model_slot_durations(kinds, *costs[v], speeds[v], params ? &(*params)[v] : nullptr);
    for (uint32_t k = 0; k < b.slots; ++k) b.slot_us[static_cast<size_t>(k) * b.count + v] = d[k];
  }
  batch_fold_slot_durations(sg, speeds, &b.slot_us, powers);
  out.busy.resize(b.count);
  std::vector<double> d(b.slots);
  for (uint32_t v = 0; v < b.count; ++v) {
    for (uint32_t k = 0; k < b.slots; ++k) d[k] = b.slot_us[static_cast<size_t>(k) * b.count + v];
    out.busy[v] = model::kernel_busy_us(sg, d);
  }
  return out;
}

}  // namespace lumos::sweep
