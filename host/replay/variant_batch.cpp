#include "replay/variant_batch.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include "common/error.hpp"

namespace lumos::replay {

VariantBatch VariantBatch::identity(uint32_t count) {
  VariantBatch b;
  b.count = count;
  for (auto& s : b.speed) s.assign(count, 1.0f);
  return b;
}

void VariantBatch::validate(uint32_t nodes) const {
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
  if (node_slot.empty()) return;
  LUMOS_EXPECT(nodes == 0 || node_slot.size() == nodes,
               "variants: the slot of every node is needed (" + std::to_string(node_slot.size()) +
                   " given for " + std::to_string(nodes) + " nodes)");
  LUMOS_EXPECT(slot_us.size() == static_cast<size_t>(slots) * count,
               "variants: slot durations do not cover every slot and variant");
  // Each check a pass without early exit (vectorized: a sweep validates every batch it replays),
  // the first bad element looked for only once some is.
  // s + 1 wraps kNoSlot to 0: past `slots` exactly when s is a slot out of range.
  static_assert(kNoSlot == UINT32_MAX);
  uint32_t out_of_range = 0;
  for (const uint32_t s : node_slot) out_of_range |= static_cast<uint32_t>(s + 1) > slots;
  LUMOS_EXPECT(!out_of_range, "variants: a node's slot is out of range");
  // Finite and not negative: in [0, max]; NaN is in no range.
  constexpr double kMax = std::numeric_limits<double>::max();
  uint32_t bad_duration = 0;
  for (const double d : slot_us) bad_duration |= !(d >= 0 && d <= kMax);
  if (!bad_duration) return;
  for (size_t i = 0; i < slot_us.size(); ++i)
    LUMOS_EXPECT(std::isfinite(slot_us[i]) && slot_us[i] >= 0,
                 "variants: slot " + std::to_string(i / count) + " of variant " +
                     std::to_string(i % count) + " has a negative or non-finite duration");
}

}  // namespace lumos::replay
