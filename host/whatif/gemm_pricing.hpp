// Builds the GEMM pricing table of a traced graph (replay/gemm_table.hpp): the shapes come from
// the launching operator's input dims (cost::cost_report), one key per distinct shape and dtype;
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

// Prices the GEMM nodes of `g` (built from `t`) for variants running on `variant_gpus` (one GPU
// name per variant) against `traced_gpu`. Shapes whose dtype a variant's GPU lacks stay unpriced.
replay::GemmPricing gemm_pricing(const graph::Graph& g, const trace::EventTable& t,
                                 const cost::KernelsDb& db, const std::string& traced_gpu,
                                 const std::vector<std::string>& variant_gpus);

// The same over the traces already classified (one table, or every rank's of a multi-rank graph).
replay::GemmPricing gemm_pricing(const graph::Graph& g, const TracedKernels& tk,
                                 const cost::KernelsDb& db, const std::string& traced_gpu,
                                 const std::vector<std::string>& variant_gpus);

}  // namespace lumos::whatif
