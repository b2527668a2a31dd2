// An estimate whose graph folds the schedule's steady state (model::MicrobatchFold), so that its
// cost does not grow with the micro-batch count (docs/design.md "Model graphs"). The step time
// and each stage's end come from the folded graph's replay, exact. What only a graph with every
// node gives (each stage's breakdown, the kernel time by class, the graph's FLOPs) is, in the
// steady state, the same for every cycle of periods (one period or p of them: p micro-batches with
// 1F1B, p groups of p interleaved): it is taken from whole graphs at three small micro-batch counts
// a cycle apart, checked to grow by the same amount per cycle, and extended to the layout's count;
// the extension's step time and stage ends must equal the folded graph's.
#pragma once
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "model/step_costs.hpp"

namespace lumos::estimate {

// Fills `run` (its estimate's request fields already set) for the layout's `costs`: the folded
// step graph and its replay, the step time, stages, breakdown, kernel time by class, graph FLOPs,
// nodes and edges. Returns false, leaving `run` as it was, when the schedule does not fold or
// its periods do not repeat; the caller then builds the whole graph.
bool fold_estimate(const EstimateRequest& req, const model::StepCosts& costs,
                   const cost::KernelsDb& db, EstimateRun* run);

}  // namespace lumos::estimate
