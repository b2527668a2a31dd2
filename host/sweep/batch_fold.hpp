// The folded slots of a batch's configurations computed together (docs/design.md, "Sweeps"):
// model::fold_slot_durations does it one configuration at a time, replaying each fold's small
// graph once per matrix row and raising the matrix to its power; configurations of one structure
// share those graphs, so here every step runs over all of them at once (one lane each), with the
// same operations in the same order in each lane: the durations are the same to the bit.
#pragma once
#include <cstddef>
#include <vector>

#include "model/step_graph.hpp"

namespace lumos::sweep {

// The last few period matrices a batch computed, with their squarings: layouts of a family that
// differ only in their micro-batch count, on the same hardware, have the same period (the same
// graph and durations, compared whole) and raise its matrix to other powers; a later batch with
// the same period replays it and squares its matrix no more.
class FoldPowers {
 public:
  FoldPowers();
  ~FoldPowers();
  FoldPowers(const FoldPowers&) = delete;
  FoldPowers& operator=(const FoldPowers&) = delete;
  struct Kept;
  static constexpr size_t kKept = 4;
  std::vector<Kept> kept_;
};

// `slot_us` holds every slot's duration for `speeds.size()` configurations, slot-major
// (slot_us[slot * count + v]), its kFolded and kFoldedPeriods slots to be filled: they are
// filled as fold_slot_durations fills them for each configuration v with speeds[v].
void batch_fold_slot_durations(const model::StepGraph& g,
                               const std::vector<model::ClassSpeeds>& speeds,
                               std::vector<double>* slot_us, FoldPowers* powers = nullptr);

}  // namespace lumos::sweep
