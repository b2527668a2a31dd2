// Structural what-ifs of a traced job (Lumos §4: other pipeline degree, layer count, model width,
// tensor degree, batch): the traced configuration is recognised (whatif/traced_config.hpp), the
// model's graph of it calibrated on the trace (whatif/trace_calibration.hpp), and the iteration
// of the edited configuration rebuilt by the model's graph builder with the same calibration:
// the pipeline schedule for the new micro-batch count, the stages' layers, sends and receives,
// TP collectives added or removed, every kernel at traced x model(new) / model(traced).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "graph/load_input.hpp"
#include "whatif/job_structure.hpp"
#include "whatif/trace_calibration.hpp"
#include "whatif/traced_config.hpp"

namespace lumos::estimate {

// New values; unset keeps the traced one.
struct StructuralEdit {
  std::optional<int64_t> layers, hidden, ffn, heads, seq, mbs, gbs;
  std::optional<int> pp, interleave, tp, dp;
  bool any() const {
    return layers || hidden || ffn || heads || seq || mbs || gbs || pp || interleave || tp || dp;
  }
};

struct StructuralRequest {
  std::optional<model::ModelSpec> model;  // the traced model (--layers and --dp need none)
  std::string stack;                      // "" = the default stack
  std::string gpu;                        // "" = the trace's
  std::string target_gpu;                 // "" = the traced GPU: the edited job's GPU
  std::string topology;                   // "" = the GPU's default
  StructuralEdit edit;
  whatif::JobHints hints;  // what the user says the traced job is (--traced, --group)
};

struct StructuralAnswer {
  whatif::JobStructure structure;
  whatif::TracedConfig traced;
  whatif::TraceCalibration calibration;
  double trace_replay_us = 0;       // the traced job, replayed as it ran
  double calibrated_traced_us = 0;  // the model's graph of the traced configuration, calibrated
  std::vector<std::string> edits;   // "pp 2 -> 4", ...
  // The model's rebuild of the edited configuration, calibrated: its memory, breakdown and cost
  // (its step time is rebuild_us; the prediction is predicted_us).
  EstimateRun edited;
  // How the edit was made (trace_graph_edit.hpp): "traced-graph edit (...)" or
  // "model rebuild (why)"; the prediction, and what the model rebuild alone predicts.
  std::string path;
  double predicted_us = 0, rebuild_us = 0;
  // False when no model was given (trace_edit_without_model.hpp): the traced graph's edit
  // alone, no calibration, no rebuild (`edited` is empty, rebuild_us the prediction).
  bool model_given = true;
};

// The traced job recognised and its model calibrated on it: the first half of a structural
// what-if, and what a trace-driven sweep (`lumos sweep --trace`) builds on.
struct CalibratedTrace {
  whatif::JobStructure structure;
  whatif::TracedConfig traced;
  whatif::TraceCalibration calibration;
  EstimateRequest request;  // the traced configuration on the traced GPU, without the calibration
  // The traces' kernels, classified once. Its lookups point into its own reports and the input's
  // tables: a moved object keeps them, a copy would point into the original's.
  whatif::TracedKernels kernels;
  // Applies the calibration to kernels priced for any configuration (this object must outlive it).
  void calibrate(model::StepCosts& c, const cost::KernelsDb& db) const;
};

// InputError (one line) as run_structural_whatif.
CalibratedTrace calibrate_trace(const graph::LoadedInput& in, const StructuralRequest& req,
                                const cost::KernelsDb& db);

// Without a model: the edits that need none (trace_edit_without_model.hpp). InputError (one
// line) for a trace without the structure the edit needs, a
// model the trace disagrees with, or an impossible edited layout.
StructuralAnswer run_structural_whatif(const graph::LoadedInput& in, const StructuralRequest& req,
                                       const cost::KernelsDb& db);

}  // namespace lumos::estimate
