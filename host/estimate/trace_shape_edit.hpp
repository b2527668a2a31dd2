// Shape edits (`--hidden`, `--ffn`, `--heads`, `--seq`, `--mbs` with the micro-batch count
// kept) on the traced graph itself (docs/design.md "Trace-driven what-ifs"): the affected
// kernels repriced in place by the cost model's ratio new / traced (whatif/shape_reprice.hpp),
// everything else as traced. Not taken, with the reason, for an edit of the layout, the GPU or
// the network, which the model rebuilds.
#pragma once
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/trace_graph_edit.hpp"
#include "estimate/trace_structural.hpp"
#include "graph/graph.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::estimate {

// `traced` and `edited`: the model's estimates of the traced and the edited configuration
// (their layouts and each stage's parameters); `edits`: the edit's lines ("gpu ...").
GraphEditPath shapes_on_traced_graph(const graph::Graph& g, const whatif::TracedKernels& tk,
                                     const whatif::JobStructure& js, const StructuralEdit& e,
                                     const std::vector<std::string>& edits, const Estimate& traced,
                                     const Estimate& edited, const cost::KernelsDb& db);

}  // namespace lumos::estimate
