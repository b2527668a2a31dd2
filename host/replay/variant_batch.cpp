#include "replay/variant_batch.hpp"

#include <cmath>

#include "common/error.hpp"

namespace lumos::replay {

VariantBatch VariantBatch::identity(uint32_t count) {
  VariantBatch b;
  b.count = count;
  for (auto& s : b.speed) s.assign(count, 1.0f);
  return b;
}

void VariantBatch::validate() const {
  LUMOS_EXPECT(count > 0, "variants: the batch is empty");
  for (int c = 0; c < kNumNodeClasses; ++c) {
    LUMOS_EXPECT(speed[c].size() == count,
                 "variants: speed factors of class " +
                     std::string(graph::to_string(static_cast<graph::NodeClass>(c))) +
                     " do not cover every variant");
    for (uint32_t v = 0; v < count; ++v)
      LUMOS_EXPECT(std::isfinite(speed[c][v]) && speed[c][v] > 0,
                   "variants: variant " + std::to_string(v) + " has a non-positive speed factor");
  }
  LUMOS_EXPECT(labels.empty() || labels.size() == count,
               "variants: labels do not match the variants");
}

}  // namespace lumos::replay
