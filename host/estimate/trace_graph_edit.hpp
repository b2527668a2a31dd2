// The structural edits that run on the traced graph itself (Lumos §4, docs/design.md
// "Trace-driven what-ifs"): `--layers` duplicates or removes traced layer instances
// (whatif/layer_splice.hpp) and replays the result, so that everything the trace knows and the
// model does not (slow CPU operators, Python gaps between layers, a slow stream, launch-bound
// layers) stays in the answer. The edits it cannot express fall back to the model rebuild
// (trace_structural.hpp), and the path taken is reported with its reason.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "graph/graph.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::estimate {

// The traced iteration's time: each rank's first step, replayed; the slowest rank's.
double first_step_us(const graph::Graph& g);

struct GraphEditPath {
  bool taken = false;
  std::string path;  // "traced-graph edit (...)" or "model rebuild (reason)"
  double edited_us = 0;
};

struct LayersOnTrace {
  int64_t traced_layers = 0, new_layers = 0;
  int pp = 1, interleave = 1;
  // Per pipeline stage: its GPUs' parameters after / before the edit. The work that scales with
  // a rank's parameters and lies outside the layers (the optimizer step, the gradient
  // reductions of the data-parallel group) is scaled by it; empty scales nothing.
  std::vector<double> param_ratio_by_stage;
  // With dp > 0, the data-parallel group's collectives are then repriced for that degree
  // (whatif/collective_edit.hpp) on the traced GPU and its network.
  int dp = 0;
  const cost::GpuSpec* gpu = nullptr;
  const cost::KernelsDb* db = nullptr;
};

// The edit on the traced graph `g` of the traces `tk` (job `js`). Not taken (with the reason)
// when the traced graph has no repeating layers, or the change is not a whole number of traced
// layer instances per pass. InputError (one line) for --dp on a job without a data-parallel group.
GraphEditPath layers_on_traced_graph(const graph::Graph& g, const whatif::TracedKernels& tk,
                                     const whatif::JobStructure& js, const LayersOnTrace& req,
                                     const std::string& label);

}  // namespace lumos::estimate
