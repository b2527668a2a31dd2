#include "estimate/trace_edit_without_model.hpp"

#include "common/error.hpp"
#include "common/format.hpp"
#include "estimate/trace_graph_edit.hpp"
#include "estimate/trace_whatif.hpp"
#include "whatif/traced_parameters.hpp"
#include "whatif/traced_passes.hpp"

namespace lumos::estimate {

namespace {

void refuse_model_edits(const StructuralRequest& req) {
  const StructuralEdit& e = req.edit;
  const char* needs = e.hidden                  ? "--hidden"
                      : e.ffn                   ? "--ffn"
                      : e.heads                 ? "--heads"
                      : e.seq                   ? "--seq"
                      : e.tp                    ? "--tp"
                      : e.mbs                   ? "--mbs"
                      : e.gbs                   ? "--gbs"
                      : e.pp                    ? "--pp"
                      : e.interleave            ? "--interleave"
                      : !req.target_gpu.empty() ? "--gpu"
                      : !req.topology.empty()   ? "--topology"
                      : !req.stack.empty()      ? "--stack"
                                                : nullptr;
  LUMOS_EXPECT(!needs, strprintf("lumos whatif: %s needs the traced model's dimensions: give "
                                 "--model PRESET or --model-file FILE (--layers and --dp need "
                                 "none)",
                                 needs));
}

}  // namespace

StructuralAnswer structural_without_model(const graph::LoadedInput& in,
                                          const StructuralRequest& req, const cost::KernelsDb& db) {
  refuse_model_edits(req);
  LUMOS_EXPECT(!in.tables().empty(), "lumos whatif: " + in.label +
                                         ": editing a job needs its traces, not a .lgraph file");
  StructuralAnswer a;
  a.model_given = false;
  const whatif::TracedKernels tk = whatif::classify_traced(in.tables(), db);
  a.structure = whatif::recognise_job(tk, req.hints);
  const whatif::JobStructure& js = a.structure;
  const whatif::TracedPasses passes = whatif::traced_passes(js, req.hints.traced);
  model::ParallelConfig& c = a.traced.cfg;
  c.tp = std::max(1, js.tp), c.cp = std::max(1, js.cp), c.pp = js.pp;
  c.dp = std::max(1, js.dp % c.cp == 0 ? js.dp / c.cp : js.dp);
  c.interleave = passes.interleave;
  c.mbs = req.hints.traced.mbs, c.gbs = req.hints.traced.gbs;  // -1: not known without a model
  a.traced.model.name = "(no model)";
  a.traced.model.layers = passes.layers;
  a.traced.assumed.push_back("layers: " + std::to_string(passes.layers) + " from the trace (" +
                             passes.layers_from + ")");
  a.trace_replay_us = first_step_us(in.graph);
  LayersOnTrace lt;
  lt.traced_layers = passes.layers;
  lt.new_layers = req.edit.layers.value_or(passes.layers);
  lt.pp = c.pp, lt.interleave = c.interleave;
  if (lt.new_layers != lt.traced_layers)
    a.edits.push_back(strprintf("layers %lld -> %lld", static_cast<long long>(lt.traced_layers),
                                static_cast<long long>(lt.new_layers)));
  if (req.edit.dp && *req.edit.dp != c.dp)
    a.edits.push_back(strprintf("dp %d -> %d", c.dp, *req.edit.dp));
  const whatif::StageParameterRatio params = whatif::layer_parameter_ratio(
      tk, js, lt.traced_layers, lt.new_layers, passes.chunk_instances * passes.interleave);
  lt.param_ratio_by_stage = params.by_stage;
  lt.dp = req.edit.dp.value_or(0);
  lt.gpu = &db.gpu(traced_gpu_of(in, req.gpu, db));
  lt.db = &db;
  const GraphEditPath p = layers_on_traced_graph(in.graph, tk, js, lt, in.label);
  LUMOS_EXPECT(p.taken, "lumos whatif: " + in.label +
                            ": without a model the edit runs on the "
                            "traced graph, which cannot express it: " +
                            p.path.substr(p.path.find('(')) +
                            "; give --model or --model-file to rebuild it");
  a.path = p.path.substr(0, p.path.size() - 1) + "; no model: " + params.assumption + ")";
  a.predicted_us = a.rebuild_us = p.edited_us;
  return a;
}

}  // namespace lumos::estimate
