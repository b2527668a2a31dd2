// Random per-class speed factors for the batch-replay tests.
#pragma once
#include <random>

#include "graph/graph.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::testing {

// `count` variants, every class factor uniform in [0.25, 4].
inline replay::VariantBatch random_variants(uint32_t count, std::mt19937& rng) {
  replay::VariantBatch b = replay::VariantBatch::identity(count);
  std::uniform_real_distribution<float> f(0.25f, 4.0f);
  for (auto& s : b.speed)
    for (auto& x : s) x = f(rng);
  return b;
}

// Random model slots on top of a batch (a slot table's model rows): about half the nodes of `g`
// that run on a resource (a thread or a stream, as a model graph's kernel kinds do) take one of
// 1-6 kinds, whose durations are uniform in [0, 50] us per variant (zero included: a kind can
// vanish in a variant).
inline void add_random_slots(replay::VariantBatch& b, const graph::Graph& g, std::mt19937& rng) {
  b.slots = 1 + static_cast<uint32_t>(rng() % 6);
  b.node_slot.assign(g.num_nodes(), replay::VariantBatch::kNoSlot);
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n)
    if (g.resource[n] != graph::kNoResource && rng() % 2)
      b.node_slot[n] = static_cast<uint32_t>(rng() % b.slots);
  b.slot_us.resize(static_cast<size_t>(b.slots) * b.count);
  std::uniform_real_distribution<double> us(0.0, 50.0);
  for (auto& d : b.slot_us) d = rng() % 8 == 0 ? 0.0 : us(rng);
}

}  // namespace lumos::testing
