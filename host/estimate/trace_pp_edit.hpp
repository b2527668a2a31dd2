// `--pp N [--interleave V]` on the traced graph (Lumos §4.2, docs/design.md "Trace-driven
// what-ifs"): the traced stages' pieces regrouped into the new stages in the 1F1B or interleaved
// order (whatif/stage_regroup.hpp), the pipeline messages priced by the cost model at the traced
// activation size, each stage's optimizer scaled with its parameters, and the result replayed.
// What the regroup cannot express (several ranks per traced stage, a traced interleaved
// schedule, layers that do not split evenly) falls back to the model rebuild, with the reason.
#pragma once
#include <string>
#include <vector>

#include "estimate/trace_graph_edit.hpp"
#include "estimate/trace_structural.hpp"

namespace lumos::estimate {

// True when the edit changes the pipeline layout and nothing else (the rest of the request is
// handled by the other paths).
bool pipeline_only_edit(const StructuralRequest& req, const std::vector<std::string>& edits);

// The edit of `in`'s traced graph to the answer's edited configuration (a.edited, already
// built by the model with the same edit: its stages' parameters and its pipeline message).
GraphEditPath pipeline_on_traced_graph(const graph::LoadedInput& in,
                                       const whatif::TracedKernels& tk, const StructuralAnswer& a,
                                       const EstimateRun& traced_run, const cost::KernelsDb& db);

}  // namespace lumos::estimate
