// The parameters a traced rank holds, as far as the trace shows them, for edits that need no
// model (docs/design.md "Trace-driven what-ifs"): a layer's weights from the GEMM shapes of the
// traced layer (N x K of each unbatched GEMM), the output head's from the largest GEMM that sees
// the layer's tokens and is larger than every layer weight, and the embedding taken to be the
// head's size (untied, as Llama). The optimizer step and the gradient reductions scale with a
// stage's parameters when layers are added or removed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "whatif/job_structure.hpp"

namespace lumos::whatif {

struct StageParameterRatio {
  std::vector<double> by_stage;  // parameters after / before the edit, per pipeline stage
  std::string assumption;        // how they were estimated, for the report
};

// Per stage of `js.pp` stages: (embedding and head + new layers per stage x layer weights) /
// (the same at the traced layers). Without an output head on any traced rank the embedding and
// head are not separated: parameters proportional to layers. `instances_per_stage`: the traced
// layer instances of one stage in one micro-batch (per chunk x chunks).
StageParameterRatio layer_parameter_ratio(const TracedKernels& tk, const JobStructure& js,
                                          int64_t traced_layers, int64_t new_layers,
                                          int64_t instances_per_stage);

}  // namespace lumos::whatif
