// One folded step graph for layouts that differ only in their micro-batch count (docs/design.md,
// "Sweeps"): with the steady state folded (model::MicrobatchFold) the graph holds the warm-up, two
// periods and the cool-down, and the number of periods only in its fold's power and in its kernel
// counts, so a sweep over global batch sizes builds the graph once and changes those.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/replay_program.hpp"
#include "sweep/batch_fold.hpp"

namespace lumos::sweep {

// `g` was built for a layout whose micro-batches fold (one MicrobatchFold). Whether the same
// layout with `periods` folded periods has the same graph: the same entries of the period's
// matrix power are joined by some path (the graph has a node per such entry). If so, sets the
// fold's periods and the kernel counts to that layout's and returns true; else leaves `g` as it
// is.
bool retarget_folded_periods(model::StepGraph* g, int64_t periods);

// The graphs built for a family with their micro-batches folded, and their programs: a layout of
// the family that differs from one only in its micro-batch count, with costs of the same
// structure, takes a kept graph with its folded periods changed. The graph is not copied: a
// family's layouts run one after another, and each takes the graph only until the next asks.
class FoldedGraphs {
 public:
  // A kept graph, retargeted to this layout of the family, with `program` set to its program;
  // none when no kept graph serves it.
  std::shared_ptr<const model::StepGraph> reuse(
      const model::ParallelConfig& cfg, const model::Layout& layout, const model::StepCosts& costs,
      std::shared_ptr<const replay::ReplayProgram>* program);
  // Keeps `g` (built from `costs` for this layout) when its micro-batches are folded.
  void keep(const model::ParallelConfig& cfg, const model::Layout& layout,
            std::shared_ptr<const model::StepCosts> costs, std::shared_ptr<model::StepGraph> g,
            std::shared_ptr<const replay::ReplayProgram> program);
  FoldPowers powers;  // the family's period matrices' squarings

 private:
  static constexpr size_t kKept = 4;  // a family's layouts come one after another
  struct Kept {
    model::Layout layout;
    model::ParallelConfig cfg;
    std::shared_ptr<const model::StepCosts> costs;  // what the graph was built from
    int64_t small = 0;                              // the micro-batches it was built with
    std::shared_ptr<model::StepGraph> graph;
    std::shared_ptr<const replay::ReplayProgram> program;
  };
  std::vector<Kept> kept_;
};

}  // namespace lumos::sweep
