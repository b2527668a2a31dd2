// A batch of configuration variants of one graph structure, as structure-of-arrays: for each
// node class, the factor by which that class runs faster in each variant (2 = twice as fast).
// GPU type, network bandwidth and collective group sizes enter through the cost model, which
// turns them into these factors (whatif/gpu_variants.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace lumos::replay {

constexpr int kNumNodeClasses = 5;  // graph::NodeClass

struct VariantBatch {
  uint32_t count = 0;
  // speed[c][v]: durations of class c are divided by it in variant v (1 = as traced).
  std::array<std::vector<float>, kNumNodeClasses> speed;
  std::vector<std::string> labels;  // optional, one per variant
  // Optional: the durations of a model-built graph's kernel kinds (model/step_graph.hpp
  // "slots"), for variants that share the graph's structure. A node with node_slot[n] != kNoSlot
  // takes slot_us[slot][v] as its duration in variant v, in place of its own and of its class's
  // factor.
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  std::vector<uint32_t> node_slot;  // empty, or one per node of the graph
  uint32_t slots = 0;
  std::vector<double> slot_us;  // [slot][variant]
  // Whether the CPU replay sums busy time per class and resource (BatchResult::busy_us,
  // resource_busy_us); a caller that reads only finish times (a sweep: its rows' busy time comes
  // from the model's kernel counts) sets it false, and those stay zero.
  bool busy = true;

  static VariantBatch identity(uint32_t count);
  // Throws InputError when a factor is not positive and finite, a slot duration is negative or
  // not finite, or sizes disagree (`nodes`: the graph's, checked when given).
  void validate(uint32_t nodes = 0) const;
};

}  // namespace lumos::replay
