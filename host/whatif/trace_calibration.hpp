// What a trace knows that the cost model does not, as factors on the model's kernel times: the
// traced job's time per GEMM shape, per collective group and per kernel class, over the model's
// time for the same kernels of the same configuration (the model's graph of the traced
// configuration, stage by stage for the traced ranks), and its launch overhead. A structural
// what-if rebuilds the iteration from the model's graph of the new configuration and scales each
// kernel by its factor: traced x model(new) / model(traced), kernel by kernel where the shape is
// kept, per class where it is new. Collectives count their transfer only: the time a rank's
// kernel waited for its peers (whatif/peer_waits.hpp) is the peers' work, which the model's graph
// replays as a wait of its own, not slower communication.
#pragma once
#include <map>
#include <string>

#include "cost/kernels_db.hpp"
#include "graph/graph.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::whatif {

struct TraceCalibration {
  // Per key ("gemm M,N,K,B", "comm <group role>", "class <kernel class>"): summed over the traced
  // ranks, and over the model's stages those ranks belong to.
  std::map<std::string, double> traced_us, model_us;
  double traced_launch_us = 0;  // mean kernel launch call in the trace, 0 when none
  // The calibrated step's collectives: recorded time and the part of it spent waiting for peers
  // (left out of the `comm` keys).
  double comm_recorded_us = 0, comm_waited_us = 0;
  // traced / model for the key, else for the aggregate (`gemm`, `comm`), else 1.
  double factor(const std::string& key) const;
};

TraceCalibration calibrate(const graph::Graph& traced, const TracedKernels& tk,
                           const JobStructure& js, const model::StepGraph& modelled,
                           const cost::KernelsDb& db);

// Scales every kernel the costs price (those priced while the graph is built too) and sets the
// launch overhead to the trace's.
void apply_calibration(const TraceCalibration& cal, const cost::KernelsDb& db,
                       model::StepCosts& costs);

}  // namespace lumos::whatif
