// VariantBatch::validate refuses a node slot past the batch's slots and a slot duration that is
// negative or not finite (NaN, infinite), naming the slot and variant, and takes every slot in
// range, kNoSlot, zero and the largest finite duration.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "replay/variant_batch.hpp"

namespace {

using lumos::replay::VariantBatch;

// Two variants, three slots, four nodes: the nodes in slots 0 and 2, none, and 1.
VariantBatch three_slots() {
  VariantBatch b = VariantBatch::identity(2);
  b.slots = 3;
  b.node_slot = {0, 2, VariantBatch::kNoSlot, 1};
  b.slot_us = {1, 2, 3, 4, 5, 6};
  return b;
}

std::string message(const VariantBatch& b) {
  try {
    b.validate(4);
  } catch (const lumos::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(VariantBatchChecks, SlotsInRangeAndNoSlotPass) {
  EXPECT_EQ(message(three_slots()), "");
}

TEST(VariantBatchChecks, ASlotPastTheLastIsRefused) {
  VariantBatch b = three_slots();
  b.node_slot[1] = 3;
  EXPECT_NE(message(b).find("a node's slot is out of range"), std::string::npos);
  b.node_slot[1] = VariantBatch::kNoSlot - 1;
  EXPECT_NE(message(b).find("a node's slot is out of range"), std::string::npos);
}

TEST(VariantBatchChecks, ZeroAndTheLargestFiniteDurationPass) {
  VariantBatch b = three_slots();
  b.slot_us[0] = 0;
  b.slot_us[5] = std::numeric_limits<double>::max();
  EXPECT_EQ(message(b), "");
}

TEST(VariantBatchChecks, NegativeOrNonFiniteDurationsAreRefusedWithSlotAndVariant) {
  for (const double bad :
       {-1e-300, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    VariantBatch b = three_slots();
    b.slot_us[3] = bad;  // slot 1 of variant 1
    EXPECT_NE(message(b).find("slot 1 of variant 1 has a negative or non-finite duration"),
              std::string::npos)
        << bad;
  }
}
