#include "whatif/traced_parameters.hpp"

#include <algorithm>

#include "common/format.hpp"

namespace lumos::whatif {

StageParameterRatio layer_parameter_ratio(const TracedKernels& tk, const JobStructure& js,
                                          int64_t traced_layers, int64_t new_layers,
                                          int64_t instances_per_stage) {
  const int pp = std::max(1, js.pp);
  StageParameterRatio r;
  // One traced instance's weights (an instance may hold several layers: the ratio needs only
  // their sum per stage, instances x instance weights).
  double instance_weights = 0, largest_layer_weight = 0;
  int64_t tokens = 0;
  for (const auto& k : js.forward.kernels) {
    if (!k.gemm || k.gemm->batch != 1) continue;
    const double w = static_cast<double>(k.gemm->n) * static_cast<double>(k.gemm->k);
    instance_weights += w;
    largest_layer_weight = std::max(largest_layer_weight, w);
    if (!tokens) tokens = k.gemm->m;
  }
  // The output head: forward (tokens x vocab/tp x hidden) and input gradient (tokens x hidden x
  // vocab/tp) share N x K; a weight gradient has M = a weight dimension, not the tokens.
  double head = 0;
  std::vector<bool> head_on_stage(pp, false);
  const int per_stage = std::max(1, js.ranks_per_stage());
  for (size_t t = 0; t < tk.reports.size(); ++t)
    for (const auto& k : tk.reports[t].kernels) {
      if (!k.gemm || k.gemm->batch != 1 || k.gemm->m != tokens) continue;
      const double w = static_cast<double>(k.gemm->n) * static_cast<double>(k.gemm->k);
      if (w <= 2 * largest_layer_weight) continue;
      head = std::max(head, w);
      head_on_stage[std::min(pp - 1, tk.ranks[t] / per_stage)] = true;
    }
  const double layers_per_stage = static_cast<double>(traced_layers) / pp;
  const double per_layer =
      instance_weights * static_cast<double>(instances_per_stage) / std::max(1.0, layers_per_stage);
  if (head <= 0 || per_layer <= 0) {
    r.by_stage.assign(pp, static_cast<double>(new_layers) / static_cast<double>(traced_layers));
    r.assumption =
        "parameters proportional to layers (no output head GEMM in the trace: embedding and "
        "head not separated)";
    return r;
  }
  for (int s = 0; s < pp; ++s) {
    // The embedding on the first stage, the head on the stage that runs it (the last).
    const double other = (s == 0 ? head : 0) + (head_on_stage[s] ? head : 0);
    const double before = other + per_layer * static_cast<double>(traced_layers) / pp;
    const double after = other + per_layer * static_cast<double>(new_layers) / pp;
    r.by_stage.push_back(after / before);
  }
  r.assumption = strprintf(
      "parameters from the traced GEMM shapes: %.3gM per layer, an output head of %.3gM and an "
      "embedding of its size (untied) per rank, norms left out",
      per_layer / 1e6, head / 1e6);
  return r;
}

}  // namespace lumos::whatif
