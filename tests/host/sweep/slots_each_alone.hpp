// The check the batch fold tests share: each configuration's slots in a sweep's batch equal its
// own (model_slot_durations, one configuration folded alone) to the bit.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/sweep_batch.hpp"

inline void expect_slots_each_alone(const lumos::model::StepGraph& sg,
                                    const std::vector<const lumos::model::StepCosts*>& costs,
                                    const std::vector<lumos::model::ClassSpeeds>& speeds,
                                    const lumos::sweep::SlotBatch& sb, const std::string& what) {
  ASSERT_EQ(sb.batch.count, costs.size()) << what;
  for (uint32_t v = 0; v < sb.batch.count; ++v) {
    const std::vector<double> want = lumos::model::model_slot_durations(sg, *costs[v], speeds[v]);
    ASSERT_EQ(want.size(), sb.batch.slots) << what;
    for (size_t s = 0; s < want.size(); ++s)
      ASSERT_EQ(sb.batch.slot_us[s * sb.batch.count + v], want[s])
          << what << ": slot " << s << " of configuration " << v;
  }
}
