#include "estimate/trace_structural.hpp"

#include <algorithm>
#include <map>
#include "common/error.hpp"
#include "common/format.hpp"
#include "estimate/trace_edit_without_model.hpp"
#include "estimate/trace_graph_edit.hpp"
#include "estimate/trace_pp_edit.hpp"
#include "estimate/trace_shape_edit.hpp"
#include "estimate/trace_whatif.hpp"

#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"

namespace lumos::estimate {

namespace {

template <typename T>
void edit_field(const std::optional<T>& to, T& field, const char* name,
                std::vector<std::string>& edits) {
  if (!to) return;
  if (*to != field)
    edits.push_back(strprintf("%s %lld -> %lld", name, static_cast<long long>(field),
                              static_cast<long long>(*to)));
  field = *to;
}

// The edited configuration. The global batch follows a new data-parallel degree unless given
// (each rank keeps its micro-batches); the head dimension follows a new width or head count.
void apply_edit(const StructuralEdit& e, model::ModelSpec& m, model::ParallelConfig& c,
                std::vector<std::string>& edits) {
  const int64_t heads = m.heads, hidden = m.hidden, head_dim = m.head_dim;
  if (e.dp && !e.gbs) c.gbs = c.gbs / c.dp * *e.dp;
  edit_field(e.layers, m.layers, "layers", edits);
  edit_field(e.hidden, m.hidden, "hidden", edits);
  edit_field(e.ffn, m.ffn, "ffn", edits);
  edit_field(e.heads, m.heads, "heads", edits);
  edit_field(e.seq, m.seq, "seq", edits);
  edit_field(e.tp, c.tp, "tp", edits);
  edit_field(e.pp, c.pp, "pp", edits);
  edit_field(e.dp, c.dp, "dp", edits);
  edit_field(e.interleave, c.interleave, "interleave", edits);
  edit_field(e.mbs, c.mbs, "mbs", edits);
  edit_field(e.gbs, c.gbs, "gbs", edits);
  if (m.hidden != hidden || m.heads != heads) {
    LUMOS_EXPECT(m.heads > 0 && m.hidden % m.heads == 0,
                 strprintf("lumos whatif: hidden %lld is not a multiple of %lld heads",
                           static_cast<long long>(m.hidden), static_cast<long long>(m.heads)));
    m.head_dim = m.hidden / m.heads;
    if (m.kv_heads == heads) m.kv_heads = m.heads;  // no grouped queries: one KV head per head
    if (m.head_dim != head_dim)
      edits.push_back(strprintf("head_dim %lld -> %lld", static_cast<long long>(head_dim),
                                static_cast<long long>(m.head_dim)));
  }
}

}  // namespace

void CalibratedTrace::calibrate(model::StepCosts& c, const cost::KernelsDb& db) const {
  whatif::apply_calibration(calibration, db, c);
}

CalibratedTrace calibrate_trace(const graph::LoadedInput& in, const StructuralRequest& req,
                                const cost::KernelsDb& db) {
  LUMOS_EXPECT(req.model.has_value(),
               "lumos whatif: a structural edit needs the traced model's dimensions: give "
               "--model PRESET or --model-file FILE");
  LUMOS_EXPECT(!in.tables().empty(), "lumos whatif: " + in.label +
                                         ": editing a job needs its traces, not a .lgraph file");
  CalibratedTrace t;
  t.kernels = whatif::classify_traced(in.tables(), db);
  const whatif::TracedKernels& tk = t.kernels;
  t.structure = whatif::recognise_job(tk, req.hints);
  t.traced = whatif::traced_config(t.structure, *req.model, req.stack, db, req.hints.traced);
  t.request.model = t.traced.model;
  t.request.cfg = t.traced.cfg;
  t.request.gpu = traced_gpu_of(in, req.gpu, db);
  const EstimateRun modelled = run_estimate(t.request, db);
  t.calibration = whatif::calibrate(in.graph, tk, t.structure, modelled.step, db);
  return t;
}

StructuralAnswer run_structural_whatif(const graph::LoadedInput& in, const StructuralRequest& req,
                                       const cost::KernelsDb& db) {
  if (!req.model) return structural_without_model(in, req, db);
  CalibratedTrace t = calibrate_trace(in, req, db);
  StructuralAnswer a;
  a.structure = std::move(t.structure);
  a.traced = std::move(t.traced);
  a.calibration = std::move(t.calibration);
  EstimateRequest traced = t.request;
  const whatif::TraceCalibration& cal = a.calibration;
  traced.adjust_costs = [&cal, &db](model::StepCosts& c) { whatif::apply_calibration(cal, db, c); };
  const EstimateRun traced_run = run_estimate(traced, db);
  a.calibrated_traced_us = traced_run.estimate.step_time_us;
  // The traced iteration: each rank's first step, replayed (the model builds one iteration).
  a.trace_replay_us = first_step_us(in.graph);
  EstimateRequest edited = traced;
  apply_edit(req.edit, edited.model, edited.cfg, a.edits);
  if (!req.topology.empty()) {
    a.edits.push_back("network -> " + req.topology);
    edited.topology = req.topology;
  }
  if (!req.target_gpu.empty() && db.gpu(req.target_gpu).name != db.gpu(traced.gpu).name) {
    a.edits.push_back("gpu " + db.gpu(traced.gpu).name + " -> " + db.gpu(req.target_gpu).name);
    edited.gpu = req.target_gpu;
  }
  if (!a.edits.empty()) edited.model.name += " (edited)";
  a.edited = run_estimate(edited, db);
  a.predicted_us = a.rebuild_us = a.edited.estimate.step_time_us;
  // The pipeline layout alone is regrouped on the traced graph (docs/design.md).
  if (pipeline_only_edit(req, a.edits)) {
    const GraphEditPath p = pipeline_on_traced_graph(in, t.kernels, a, traced_run, db);
    a.path = p.path;
    if (p.taken) a.predicted_us = p.edited_us;
    return a;
  }
  // The layer count alone is edited on the traced graph itself (docs/design.md).
  const StructuralEdit& e = req.edit;
  const bool layers_only =
      !(e.hidden || e.ffn || e.heads || e.seq || e.mbs || e.gbs || e.pp || e.interleave || e.tp) &&
      std::all_of(a.edits.begin(), a.edits.end(), [](const std::string& x) {
        return x.rfind("layers ", 0) == 0 || x.rfind("dp ", 0) == 0 || x.rfind("gbs ", 0) == 0;
      });
  if (!layers_only) {
    // Shape edits alone reprice the traced graph's kernels in place (trace_shape_edit.hpp).
    const GraphEditPath sp = shapes_on_traced_graph(in.graph, t.kernels, a.structure, e, a.edits,
                                                    traced_run.estimate, a.edited.estimate, db);
    a.path = sp.path;
    if (sp.taken) a.predicted_us = sp.edited_us;
    return a;
  }
  LayersOnTrace lt;
  lt.traced_layers = a.traced.model.layers;
  lt.new_layers = e.layers.value_or(lt.traced_layers);
  lt.pp = a.traced.cfg.pp, lt.interleave = a.traced.cfg.interleave;
  const auto& before = traced_run.estimate.stages;
  const auto& after = a.edited.estimate.stages;
  for (size_t s = 0; s < before.size() && s < after.size(); ++s)
    lt.param_ratio_by_stage.push_back(before[s].memory.params > 0
                                          ? static_cast<double>(after[s].memory.params) /
                                                static_cast<double>(before[s].memory.params)
                                          : 1.0);
  lt.dp = e.dp.value_or(0);
  lt.gpu = &db.gpu(traced.gpu);
  lt.db = &db;
  const GraphEditPath p = layers_on_traced_graph(in.graph, t.kernels, a.structure, lt, in.label);
  a.path = p.path;
  if (p.taken) a.predicted_us = p.edited_us;
  return a;
}

}  // namespace lumos::estimate
