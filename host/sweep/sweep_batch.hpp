// The batch a sweep replays on one step graph: configurations whose graphs share a structure
// (model::same_structure) differ only in durations, so each is one variant of a batch over the
// graph's model slots (docs/design.md, "Sweeps"). Whichever backend replays it (engine.hpp), the
// batch is this one.
#pragma once
#include <vector>

#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/variant_batch.hpp"
#include "sweep/batch_fold.hpp"

namespace lumos::sweep {

struct SlotBatch {
  replay::VariantBatch batch;           // one variant per configuration, in their order
  std::vector<model::KernelBusy> busy;  // each configuration's kernel time by power draw
};

// costs[v] and speeds[v] are configuration v's: its kernel kinds' durations (with the same
// structure as the costs `sg` was built from) and its classes' speed factors. A kind's duration
// is divided by its class's speed; the nodes without a kind (CPU calls) take their class's
// factor in the batch. Throws InputError when a slot of `sg` is not in some costs.
// `powers` (if any) keeps fold matrices' squarings for later batches (batch_fold.hpp).
// `params` (if any): per configuration, its slots' parameter counts (model::slot_params), for
// configurations of other degrees than the graph's; none: the graph's own.
SlotBatch slot_batch(const model::StepGraph& sg, const std::vector<const model::StepCosts*>& costs,
                     const std::vector<model::ClassSpeeds>& speeds, FoldPowers* powers = nullptr,
                     const std::vector<std::vector<double>>* params = nullptr);

}  // namespace lumos::sweep
