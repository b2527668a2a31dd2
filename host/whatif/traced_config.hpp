// The configuration a traced job ran, for the structural what-ifs: the parallel degrees, the
// micro-batches, the micro-batch size and the interleaving, recognised from the trace
// (job_structure.hpp); the model's dimensions come from the user (a preset or a model file) and
// are checked against the GEMM shapes of the traced layer.
#pragma once
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::whatif {

struct TracedConfig {
  model::ModelSpec model;
  model::ParallelConfig cfg;
  std::vector<std::string> assumed;  // what was taken rather than found, one line each
};

// Throws InputError, one line naming it, when the trace lacks what is needed (the layers of the
// forward pass, the pipeline stages, a GEMM shape) or disagrees with the model.
TracedConfig traced_config(const JobStructure& js, const model::ModelSpec& m,
                           const std::string& stack, const cost::KernelsDb& db);
// The same with what the user says the job ran (`--traced`: micro-batch size, global batch,
// interleaving; the degrees are already in `js`). When the model's GEMMs differ from the
// traced ones, the message names the first GEMM and dimension that differ, and the tensor
// degree or micro-batch size that would match where one does.
TracedConfig traced_config(const JobStructure& js, const model::ModelSpec& m,
                           const std::string& stack, const cost::KernelsDb& db,
                           const TracedDegrees& given);

}  // namespace lumos::whatif
