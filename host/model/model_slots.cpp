// Slot accounting: the kernel kind (ModelSlot) each node of a model-driven step graph names, and
// what the graph keeps per kind, so that another configuration of the same structure gives every
// node's duration, the compute streams' busy time and the kernel time by power class without
// building the graph again.
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "model/step_graph_builder.hpp"

namespace lumos::model {
namespace detail {

// The slot of an op of StepCosts: which list holds it, and where.
ModelSlot slot_of(const StepCosts& costs, const KernelOp& op) {
  const std::pair<Src, const std::vector<KernelOp>*> lists[] = {
      {Src::kLayerFwd, &costs.layer_fwd},
      {Src::kLayerBwd, &costs.layer_bwd},
      {Src::kLayerRecompute, &costs.layer_recompute},
      {Src::kEmbedFwd, &costs.embed_fwd},
      {Src::kEmbedBwd, &costs.embed_bwd},
      {Src::kHeadFwd, &costs.head_fwd},
      {Src::kHeadBwd, &costs.head_bwd}};
  for (const auto& [source, list] : lists)
    if (!list->empty() && &op >= list->data() && &op < list->data() + list->size())
      return {source, static_cast<uint32_t>(&op - list->data()), 0};
  if (&op == &costs.p2p) return {Src::kP2p, 0, 0};
  if (&op == &costs.embedding_allreduce) return {Src::kEmbeddingAllreduce, 0, 0};
  throw std::logic_error("step graph: a kernel's op is not in StepCosts");
}

int32_t SlotTable::id(const ModelSlot& slot, NodeClass cls, PowerClass power, StepGraph* out,
                      uint32_t site) {
  // Looked up before inserting: emplace would allocate a map node for every kernel built.
  auto it = index_.lower_bound(slot);
  if (it == index_.end() || index_.key_comp()(slot, it->first)) {
    it = index_.emplace_hint(it, slot, static_cast<int32_t>(out->slots.size()));
    out->slots.push_back(slot);
    out->slot_site.push_back(site);
    out->slot_class.push_back(static_cast<uint8_t>(cls));
    out->slot_power.push_back(power);
    out->compute_kernels.push_back(0);
    out->gpu_kernels.push_back(0);
  }
  return it->second;
}

}  // namespace detail

using Src = ModelSlot::Source;

std::vector<uint32_t> StepGraph::node_slots() const {
  if (node_slot.size() == graph.num_nodes()) return node_slot;
  std::vector<uint32_t> out(graph.num_nodes(), UINT32_MAX);
  for (graph::NodeId n = 0; n < graph.num_nodes(); ++n)
    if (meta_of(n).slot >= 0) out[n] = static_cast<uint32_t>(meta_of(n).slot);
  return out;
}

std::vector<double> model_slot_durations(const StepGraph& g, const StepCosts& costs,
                                         const ClassSpeeds& speed,
                                         const std::vector<double>* params) {
  LUMOS_EXPECT(!params || params->size() == g.slots.size(),
               "model slots: one parameter count per slot");
  std::vector<double> out;
  out.reserve(g.slots.size());
  for (const ModelSlot& slot : g.slots) {
    const double n = params ? (*params)[out.size()] : slot.params;
    const std::vector<KernelOp>* list = nullptr;
    switch (slot.source) {
      case Src::kLayerFwd:
        list = &costs.layer_fwd;
        break;
      case Src::kLayerBwd:
        list = &costs.layer_bwd;
        break;
      case Src::kLayerRecompute:
        list = &costs.layer_recompute;
        break;
      case Src::kEmbedFwd:
        list = &costs.embed_fwd;
        break;
      case Src::kEmbedBwd:
        list = &costs.embed_bwd;
        break;
      case Src::kHeadFwd:
        list = &costs.head_fwd;
        break;
      case Src::kHeadBwd:
        list = &costs.head_bwd;
        break;
      case Src::kP2p:
        out.push_back(costs.p2p.dur_us);
        continue;
      case Src::kEmbeddingAllreduce:
        out.push_back(costs.embedding_allreduce.dur_us);
        continue;
      case Src::kGradReduce:
        out.push_back(costs.grad_reduce(n).dur_us);
        continue;
      case Src::kParamGather:
        out.push_back(costs.param_gather(n).dur_us);
        continue;
      case Src::kOptimizer:
        out.push_back(costs.optimizer(n).dur_us);
        continue;
      case Src::kFolded:
      case Src::kFoldedPeriods:
        out.push_back(0);  // below
        continue;
    }
    LUMOS_EXPECT(list && slot.index < list->size(),
                 "model slots: the costs have another structure than the graph's");
    out.push_back((*list)[slot.index].dur_us);
  }
  for (size_t s = 0; s < out.size(); ++s) out[s] /= static_cast<double>(speed[g.slot_class[s]]);
  fold_slot_durations(g, speed, &out);
  return out;
}

double compute_busy_us(const StepGraph& g, const std::vector<double>& slot_us) {
  double busy = 0;
  for (size_t s = 0; s < g.compute_kernels.size(); ++s)
    busy += static_cast<double>(g.compute_kernels[s]) * slot_us[s];
  return busy;
}

KernelBusy kernel_busy_us(const StepGraph& g, const std::vector<double>& slot_us) {
  KernelBusy b;
  for (size_t s = 0; s < g.gpu_kernels.size(); ++s) {
    const double us = static_cast<double>(g.gpu_kernels[s]) * slot_us[s];
    switch (g.slot_power[s]) {
      case PowerClass::kComputeBound:
        b.compute_bound_us += us;
        break;
      case PowerClass::kMemoryBound:
        b.memory_bound_us += us;
        break;
      case PowerClass::kComm:
        b.comm_us += us;
        break;
    }
  }
  return b;
}

namespace {

// Two stacks the builder cannot tell apart: every kernel choice, flag and constant equal, the
// names and sources aside (megatron-core and nemo-2025 run the same Megatron-Core code).
bool same_stack(const cost::StackSpec& x, const cost::StackSpec& y) {
  return x.attention == y.attention && x.fused_softmax == y.fused_softmax &&
         x.dropout == y.dropout && x.fused_kernels == y.fused_kernels &&
         x.eager_norm_bytes == y.eager_norm_bytes && x.eager_act_bytes == y.eager_act_bytes &&
         x.eager_rope_bytes == y.eager_rope_bytes && x.tp_overlap == y.tp_overlap &&
         x.grad_reduce_overlap == y.grad_reduce_overlap && x.p2p_blocking == y.p2p_blocking &&
         x.grad_reduce_bytes == y.grad_reduce_bytes &&
         x.optimizer_bytes_per_param == y.optimizer_bytes_per_param &&
         x.grad_accumulation_bytes == y.grad_accumulation_bytes &&
         x.fp8_param_gather == y.fp8_param_gather && x.fp8_cast_fusion == y.fp8_cast_fusion &&
         x.selective == y.selective && x.cp_rotation == y.cp_rotation &&
         x.sp_saved_input == y.sp_saved_input && x.recompute_early_stop == y.recompute_early_stop &&
         x.separate_projections == y.separate_projections && x.fp8.name == y.fp8.name &&
         x.kernel_time_factor == y.kernel_time_factor;
}

}  // namespace

// Sizes, FLOPs and degrees only price kernels (their slots' durations), so configurations of
// other tensor, context or data parallel degrees and micro-batch sizes compare equal here; what
// adds or removes nodes is compared: the ops and their flags, whether a group has peers, whether a
// kernel does matrix arithmetic (its power class), the host's constants, whether gradients are
// reduced and the optimizer distributed. The parameter counts of buckets, gathers and optimizer
// steps are the ParamPlan's (same_param_shape).
bool same_structure(const StepCosts& a, const StepCosts& b) {
  // A collective's kernel name carries NCCL's algorithm and protocol, which its message size
  // chooses: a name only, its duration in its slot.
  auto same_op = [](const KernelOp& x, const KernelOp& y) {
    return (x.name == y.name || (x.comm() && y.comm())) && x.group == y.group &&
           x.collective == y.collective && (x.group_size > 1) == (y.group_size > 1) &&
           x.side == y.side && x.fork == y.fork && x.join == y.join &&
           x.first_microbatch_only == y.first_microbatch_only && x.deferrable == y.deferrable &&
           (x.hw_flops > 0) == (y.hw_flops > 0) && x.gemm.has_value() == y.gemm.has_value();
  };
  auto same_list = [&](const std::vector<KernelOp>& x, const std::vector<KernelOp>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_op(x[i], y[i])) return false;
    return true;
  };
  return same_list(a.layer_fwd, b.layer_fwd) && same_list(a.layer_bwd, b.layer_bwd) &&
         same_list(a.layer_recompute, b.layer_recompute) && same_list(a.embed_fwd, b.embed_fwd) &&
         same_list(a.embed_bwd, b.embed_bwd) && same_list(a.head_fwd, b.head_fwd) &&
         same_list(a.head_bwd, b.head_bwd) && same_op(a.p2p, b.p2p) &&
         same_op(a.embedding_allreduce, b.embedding_allreduce) &&
         a.cpu_launch_us == b.cpu_launch_us && a.launch_latency_us == b.launch_latency_us &&
         a.event_call_us == b.event_call_us &&
         (a.stack == b.stack || (a.stack && b.stack && same_stack(*a.stack, *b.stack))) &&
         (a.dp_group > 1) == (b.dp_group > 1) && a.distributed_optimizer == b.distributed_optimizer;
}

}  // namespace lumos::model
