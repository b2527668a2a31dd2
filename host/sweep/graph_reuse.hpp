// One folded step graph for layouts that differ only in their micro-batch count (docs/design.md,
// "Sweeps"): with the steady state folded (model::MicrobatchFold) the graph holds the warm-up, two
// periods and the cool-down, and the number of periods only in its fold's power and in its kernel
// counts, so a sweep over global batch sizes builds the graph once and changes those.
#pragma once
#include <cstdint>

#include "model/step_graph.hpp"

namespace lumos::sweep {

// `g` was built for a layout whose micro-batches fold (one MicrobatchFold). Whether the same
// layout with `periods` folded periods has the same graph: the same entries of the period's
// matrix power are joined by some path (the graph has a node per such entry). If so, sets the
// fold's periods and the kernel counts to that layout's and returns true; else leaves `g` as it
// is.
bool retarget_folded_periods(model::StepGraph* g, int64_t periods);

}  // namespace lumos::sweep
