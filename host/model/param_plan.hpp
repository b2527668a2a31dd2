// The parameter counts that size a model-driven step graph's gradient buckets, parameter gathers
// and optimizer steps (docs/design.md, "Sweeps"). Which of those kernels exist and where they
// wait is the graph's shape; how many parameters each moves is only a duration. A plan names
// every such count (a site) by its place in the iteration, so that a graph built for one
// configuration prices another of the same shape (other tensor, context or data parallel
// degrees) with that configuration's counts: the builder records each size-priced slot's site
// (StepGraph::slot_site), and slot_params reads the other configuration's count there.
#pragma once
#include <cstdint>
#include <vector>

#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"

namespace lumos::model {

struct StepGraph;

struct ParamPlan {
  static constexpr uint32_t kNoSite = UINT32_MAX;
  // Parameters one GPU holds of a layer, of the embedding (first virtual stage) and of the final
  // norm and output layer (last virtual stage).
  double layer = 0, embed = 0, head = 0;
  bool reduces = false;  // gradient buckets reduced over the data-parallel ranks (not FSDP)
  bool gathers = false;  // the distributed optimizer gathers updated parameters in buckets
  bool fsdp = false;     // FSDP: per-layer gathers and reduce-scatters
  // Per site: its parameters, and the first site of its group (buckets, gathers, FSDP shares,
  // optimizer steps) with the same count: the builder keys slots by count, so two plans whose
  // sites coincide alike give graphs with the same slots.
  std::vector<double> value;
  std::vector<uint32_t> label;
  // Per virtual stage (and one past the last): its first gradient bucket's and gathered bucket's
  // site.
  std::vector<uint32_t> grad_first, gather_first;
  uint32_t share_first = 0, optimizer_first = 0;
  // Per gradient bucket (from grad_first[0]): the term of its chunk's backward (head, layers last
  // to first, the final flush) that closes it.
  std::vector<uint32_t> grad_close;
  // Per gathered bucket (from gather_first[0]): the parameter offset where it ends in its chunk,
  // and the first of the chunk's waits (embedding, each layer, the end) that waits for it.
  std::vector<double> gather_end;
  std::vector<uint32_t> gather_wait;

  // The parameter offsets a chunk's first forward waits for before its embedding and before
  // layer i (virtual stage j).
  double embed_end(int64_t j) const { return j == 0 ? embed : 0; }
  double layer_end(int64_t j, int64_t i) const {
    return embed_end(j) + layer * static_cast<double>(i + 1);
  }
  // FSDP: the share of layer i of virtual stage j (the embedding with the first layer of the
  // first virtual stage, the head with the last layer of the last).
  uint32_t share_site(bool with_embed, bool with_head) const {
    return share_first + (with_embed ? 2 : 0) + (with_head ? 1 : 0);
  }
  uint32_t optimizer_site(int stage) const {
    return optimizer_first + static_cast<uint32_t>(stage);
  }
};

// Of `costs` only the data-parallel group and the bucket size count: costs that agree on them
// have one plan.
ParamPlan param_plan(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                     const StepCosts& costs);

// Whether graphs built under `a` and `b` (costs of the same structure, same pipeline layout) have
// the same nodes, edges and slots: the same kernels sized by parameters, waiting where they do,
// and keyed to slots alike.
bool same_param_shape(const ParamPlan& a, const ParamPlan& b);

// Per slot of `g` (built under a plan of the same shape as `plan`): its parameters under `plan`;
// slots not sized by parameters keep the graph's.
std::vector<double> slot_params(const StepGraph& g, const ParamPlan& plan);

}  // namespace lumos::model
