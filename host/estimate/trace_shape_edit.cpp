#include "estimate/trace_shape_edit.hpp"

#include <algorithm>

#include "common/format.hpp"
#include "whatif/shape_reprice.hpp"

namespace lumos::estimate {

GraphEditPath shapes_on_traced_graph(const graph::Graph& g, const whatif::TracedKernels& tk,
                                     const whatif::JobStructure& js, const StructuralEdit& e,
                                     const std::vector<std::string>& edits, const Estimate& traced,
                                     const Estimate& edited, const cost::KernelsDb& db) {
  GraphEditPath p;
  const bool elsewhere = std::any_of(edits.begin(), edits.end(), [](const std::string& x) {
    return x.rfind("gpu ", 0) == 0 || x.rfind("network ", 0) == 0;
  });
  if (e.layers || e.pp || e.interleave || e.dp || elsewhere) {
    p.path =
        "model rebuild (the traced graph takes --layers and --dp, or shape edits alone; this "
        "edit changes the layout, the GPU or the network)";
    return p;
  }
  whatif::ShapeRepriceRequest r;
  r.traced_model = traced.model, r.new_model = edited.model;
  r.traced_cfg = traced.cfg, r.new_cfg = edited.cfg;
  r.gpu = &db.gpu(traced.gpu);
  const cost::Topology& topo = db.default_topology_for(*r.gpu);
  r.topology = &topo;
  for (size_t s = 0; s < traced.stages.size() && s < edited.stages.size(); ++s) {
    r.params_before_by_stage.push_back(static_cast<double>(traced.stages[s].memory.params));
    r.params_after_by_stage.push_back(static_cast<double>(edited.stages[s].memory.params));
  }
  const std::string refusal = whatif::shape_reprice_refusal(r, db);
  if (!refusal.empty()) {
    p.path = "model rebuild (" + refusal + ")";
    return p;
  }
  const whatif::ShapeReprice s = whatif::reprice_shapes(g, tk, js, r, db);
  std::string kept;
  for (size_t i = 0; i < s.kept_kinds.size() && i < 6; ++i)
    kept += (i ? ", " : ": ") + s.kept_kinds[i];
  if (s.kept_kinds.size() > 6) kept += strprintf(", %zu more", s.kept_kinds.size() - 6);
  p.taken = true;
  p.edited_us = first_step_us(s.graph);
  p.path = strprintf("traced-graph reprice (%u kernels repriced, %u kept%s)", s.repriced, s.kept,
                     kept.c_str());
  return p;
}

}  // namespace lumos::estimate
