// The edits that need no model (docs/design.md "Trace-driven what-ifs"): `--layers` (and
// `--dp` with it) on the traced graph, with the traced layer count from the recognised
// structure (or `--traced layers=L`) and the parameters the optimizer and the gradient
// reductions scale with estimated from the traced GEMM shapes (whatif/traced_parameters.hpp).
#pragma once
#include "cost/kernels_db.hpp"
#include "estimate/trace_structural.hpp"
#include "graph/load_input.hpp"

namespace lumos::estimate {

// `req.model` unset. InputError (one line) for an edit that needs the model (a shape, the
// layout, the GPU or the network), a trace without repeating layers or pipeline stages, and
// for an edit the traced graph cannot express (there is no model to rebuild it with).
StructuralAnswer structural_without_model(const graph::LoadedInput& in,
                                          const StructuralRequest& req, const cost::KernelsDb& db);

}  // namespace lumos::estimate
