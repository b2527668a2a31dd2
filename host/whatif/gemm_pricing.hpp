// Builds the GEMM pricing table of a traced graph (replay/gemm_table.hpp): the shapes come from
// the launching operator's input dims (trace::cost_report), one key per distinct shape and dtype;
// for a folder of ranks, from each node's own rank's trace.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "replay/gemm_table.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::cost {
struct KernelsDb;
}
namespace lumos::trace {
struct EventTable;
}

namespace lumos::whatif {

// Prices the kernels of `g` (built from `t`) for variants running on `variant_gpus` (one GPU
// name per variant) against `traced_gpu`: GEMMs by shape with the cost model (shapes whose dtype
// a variant's GPU lacks stay unpriced), attention by the GPUs' matrix rates (peak x the clock a
// power cap allows), memory-bound kernels by their HBM bandwidths. `compute_speed` (one per
// variant, or empty) is a compute speed axis: the priced nodes take it too.
replay::GemmPricing gemm_pricing(const graph::Graph& g, const trace::EventTable& t,
                                 const cost::KernelsDb& db, const std::string& traced_gpu,
                                 const std::vector<std::string>& variant_gpus,
                                 const std::vector<double>& compute_speed = {});

// The same over the traces already classified (one table, or every rank's of a multi-rank graph).
replay::GemmPricing gemm_pricing(const graph::Graph& g, const TracedKernels& tk,
                                 const cost::KernelsDb& db, const std::string& traced_gpu,
                                 const std::vector<std::string>& variant_gpus,
                                 const std::vector<double>& compute_speed = {});

}  // namespace lumos::whatif
