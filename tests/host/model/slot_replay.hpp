// Replays a model-driven step graph through the batch engine for several configurations of its
// structure, every node's duration from its slot.
#pragma once
#include <vector>

#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/batch_replay.hpp"

namespace lumos::model::testing {

// Replays `g` for `costs` at `speed` through the batch engine, its durations from slots (each
// configuration's slot durations appended to `slot_us`).
inline lumos::replay::BatchResult replay_with(const StepGraph& g,
                                              const std::vector<StepCosts>& costs,
                                              const std::vector<ClassSpeeds>& speeds,
                                              std::vector<std::vector<double>>* slot_us) {
  auto b = lumos::replay::VariantBatch::identity(static_cast<uint32_t>(costs.size()));
  b.node_slot = g.node_slots();
  b.slots = static_cast<uint32_t>(g.slots.size());
  b.slot_us.resize(static_cast<size_t>(b.slots) * b.count);
  for (uint32_t v = 0; v < b.count; ++v) {
    for (int c = 0; c < lumos::replay::kNumNodeClasses; ++c)
      b.speed[static_cast<size_t>(c)][v] = speeds[v][static_cast<size_t>(c)];
    slot_us->push_back(model_slot_durations(g, costs[v], speeds[v]));
    for (uint32_t s = 0; s < b.slots; ++s)
      b.slot_us[static_cast<size_t>(s) * b.count + v] = slot_us->back()[s];
  }
  return lumos::replay::batch_replay_cpu(g.graph, b);
}

}  // namespace lumos::model::testing
