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

  static VariantBatch identity(uint32_t count);
  // Throws InputError when a factor is not positive and finite or sizes disagree.
  void validate() const;
};

}  // namespace lumos::replay
