// One step graph for the layouts of one shape (docs/design.md, "Sweeps"): layouts that differ in
// tensor, context or data parallel degree, micro-batch size or count give graphs of the same
// nodes and edges when their costs have the same structure (model::same_structure) and their
// parameter counts the same shape (model::same_param_shape); only slot durations differ. With the
// steady state folded (model::MicrobatchFold) the graph holds the warm-up, two periods and the
// cool-down, and the number of periods only in its fold's power and in its kernel counts, so a
// sweep over global batch sizes builds the graph once and changes those.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "model/parallel_config.hpp"
#include "model/param_plan.hpp"
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

// The graphs built for a family (layouts of the same pipeline shape) with their layers folded,
// and their programs: a layout of the family whose costs have the same structure and whose
// parameter counts the same shape as a kept graph's, with the same micro-batches or with
// micro-batches that fold alike, takes that graph (its folded periods changed), priced with its
// own slot durations and parameter counts (model::slot_params). The graph is not copied: a
// family's layouts run one after another, and each takes the graph only until the next asks.
class FoldedGraphs {
 public:
  // A kept graph, retargeted to this layout of the family, with `program` set to its program;
  // none when no kept graph serves it.
  std::shared_ptr<const model::StepGraph> reuse(
      const model::ParallelConfig& cfg, const model::Layout& layout, const model::StepCosts& costs,
      const model::ParamPlan& plan, std::shared_ptr<const replay::ReplayProgram>* program);
  // Keeps `g` (built from `costs` under `plan` for this layout) when its micro-batches are
  // folded, or when it is small.
  void keep(const model::ParallelConfig& cfg, const model::Layout& layout,
            std::shared_ptr<const model::StepCosts> costs,
            std::shared_ptr<const model::ParamPlan> plan, std::shared_ptr<model::StepGraph> g,
            std::shared_ptr<const replay::ReplayProgram> program);
  FoldPowers powers;  // the family's period matrices' squarings

 private:
  // A family's layouts come one after another, a few shapes among them (with and without
  // gradient buckets, the micro-batch plans); the least recently used graph goes first.
  // Kept graphs hold at most kKeptNodes nodes together (256 bytes a node, outside the memory
  // budget), but the last one kept; one whose micro-batches are not folded is kept up to
  // kKeptUnfoldedNodes. The family runs the layouts that may share a graph one after another
  // (sweep_run.cpp), so the last few serve.
  static constexpr size_t kKept = 8;
  static constexpr uint64_t kKeptNodes = 400'000;
  // An unfolded graph of 64 micro-batches of a PP 16 x VP 5 layout with context parallelism and
  // full recomputation (its ring's exchanges and the waits for them) holds more than
  // 400,000 (kept_graphs_test).
  static constexpr uint64_t kKeptUnfoldedNodes = 600'000;
  struct Kept {
    model::Layout layout;
    model::ParallelConfig cfg;
    std::shared_ptr<const model::StepCosts> costs;  // what the graph was built from
    std::shared_ptr<const model::ParamPlan> plan;
    int64_t small = 0;  // the micro-batches it was built with (folded; else 0)
    std::shared_ptr<model::StepGraph> graph;
    std::shared_ptr<const replay::ReplayProgram> program;
  };
  std::vector<Kept> kept_;
};

}  // namespace lumos::sweep
