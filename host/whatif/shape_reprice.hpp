// Shape edits on the traced graph (Lumos §4, docs/design.md "Trace-driven what-ifs"): another
// width, MLP size, head count, sequence or micro-batch size keeps the traced iteration's nodes,
// dependencies and CPU work, and changes the time of the kernels whose shapes change: each by
// the cost model's ratio new / traced for the same kernel (traced_us x model(new) /
// model(traced)), so that each traced kernel keeps its own efficiency. GEMMs by their traced
// shape, mapped to the model's GEMM of that shape at the new configuration; other kernels by
// the model's kernel of the same name, else by their class (attention, norms, elementwise: the
// class's time new / traced); collectives by their group's (tensor-parallel, pipeline,
// data-parallel with the parameters), their transfer only (a wait for peers stays as traced,
// whatif/peer_waits.hpp); the optimizer with the parameters. Kernels the model cannot price keep
// their traced time and are listed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "graph/graph.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::whatif {

struct ShapeRepriceRequest {
  model::ModelSpec traced_model, new_model;
  model::ParallelConfig traced_cfg, new_cfg;
  const cost::GpuSpec* gpu = nullptr;
  const cost::Topology* topology = nullptr;
  // Per pipeline stage, one GPU's parameters before and after the edit (the model's memory).
  std::vector<double> params_before_by_stage, params_after_by_stage;
};

struct ShapeReprice {
  graph::Graph graph;
  uint32_t repriced = 0, kept = 0;      // kernels
  std::vector<std::string> kept_kinds;  // "name (class)" of the kernels kept, each once
};

// Empty when the traced graph can take the edit in place, else why not (the tensor degree or
// the micro-batch count changes, or the model's layer changes its kernels).
std::string shape_reprice_refusal(const ShapeRepriceRequest& r, const cost::KernelsDb& db);

ShapeReprice reprice_shapes(const graph::Graph& g, const TracedKernels& tk, const JobStructure& js,
                            const ShapeRepriceRequest& r, const cost::KernelsDb& db);

}  // namespace lumos::whatif
