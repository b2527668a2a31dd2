#include "model/memory_footprint.hpp"

#include "model/pipeline_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace lumos::model {

double layer_activation_bytes(const ModelSpec& m, const ParallelConfig& c,
                              const cost::StackSpec* stack) {
  const double s = static_cast<double>(m.seq) / c.cp, b = static_cast<double>(c.mbs),
               h = static_cast<double>(m.hidden), t = c.tp;
  const double sbh = s * b * h;
  if (c.recompute == Recompute::kFull)  // only the layer's input is kept
    return 2 * sbh / (c.sequence_parallel ? t : 1);
  // Unfused attention without selective recompute keeps, per head, the 16-bit softmax output and,
  // with dropout, its 1-byte mask and 16-bit output: Korthikanti et al.'s 5as/h term.
  double scores = 0;
  if (stack && stack->attention == cost::AttentionImpl::kUnfused && c.recompute == Recompute::kNone)
    scores = (stack->dropout ? 5.0 : 2.0) * static_cast<double>(m.heads) * s *
             static_cast<double>(m.seq) * b / t;
  // Korthikanti et al.'s 34 s b h, term by term, for the model's own shapes: the attention keeps
  // its input (2), Q (2 q/h), K and V (2 kv/h each: smaller than Q with grouped-query attention)
  // and its output (2 q/h); the MLP its input (2) and, per element of its inner size, the first
  // GEMM's output and the activation's (2 + 2, or 4 + 2 when gated: gate and up are both kept);
  // the two norms their inputs (4); and with dropout, the two 1-byte masks (2).
  // With FP8 (Transformer Engine's LayerNormLinear, Linear and LayerNormMLP) a GEMM keeps the
  // 1-byte FP8 copy of its input that it multiplied: the norms' outputs before QKV and FC1 and
  // the activation's output before FC2 take 1 byte in place of 2, and the attention projection
  // keeps an FP8 copy of its input beside the attention's own 16-bit output (+1 q/h).
  const bool fp8 = c.dtype == cost::Dtype::kFp8;
  const double gemm_input = fp8 ? 1.0 : 2.0;
  const double q = static_cast<double>(m.q_size()) / h, kv = static_cast<double>(m.kv_size()) / h;
  const double ffn_ratio = static_cast<double>(m.ffn) / h;
  const double mlp_inner = ((m.act == Activation::kSwiglu ? 4.0 : 2.0) + gemm_input) * ffn_ratio;
  const double masks = (stack == nullptr || stack->dropout) ? 2.0 : 0.0;
  // Split by tensor parallelism: Q, K, V, the attention output (and its FP8 copy) and the MLP's
  // inner tensors.
  const double split = 2 * q + 4 * kv + 2 * q + (fp8 ? q : 0.0) + mlp_inner;
  // Without sequence parallelism the norms' inputs (4), the attention's and the MLP's inputs
  // (2 + 2, the norms' outputs) and the masks are replicated on every rank.
  const double replicated = 4 + 2 * gemm_input + masks;
  // PyTorch's DTensor keeps the gathered inputs of QKV and FC1 for their weight gradients
  // (stacks.json sp_saved_input), not the shards; op-level recomputation drops them.
  const bool kept_gathered = stack && stack->sp_saved_input == cost::SpSavedInput::kGathered &&
                             (c.recompute == Recompute::kNone ||
                              (c.recompute == Recompute::kSelective &&
                               stack->selective == cost::SelectiveRecompute::kAttentionCore));
  if (c.sequence_parallel)
    return sbh * (replicated + split) / t + scores +
           (kept_gathered ? 2 * gemm_input * sbh * (1 - 1 / t) : 0.0);
  return sbh * (replicated + split / t) + scores;
}

std::vector<StageMemory> memory_per_stage(const ModelSpec& m, const ParallelConfig& c,
                                          const Layout& l, const cost::StackSpec* stack) {
  const ParamCounts pc = parameter_counts(m, l.padded_vocab);
  const double per_layer_act = layer_activation_bytes(m, c, stack);
  const double s = static_cast<double>(m.seq) / c.cp, b = static_cast<double>(c.mbs),
               h = static_cast<double>(m.hidden), t = c.tp;
  const double dp_shards = static_cast<double>(c.dp) * c.cp;  // Megatron's data-parallel group
  std::vector<StageMemory> out;
  for (int st = 0; st < c.pp; ++st) {
    StageMemory sm;
    sm.stage = st;
    const int64_t layers_per_stage = l.layers_on_stage(st, c.pp);
    // Tensor-parallel layers split their weights; norms are replicated (small; counted split).
    const int64_t layer_params = pc.per_layer * layers_per_stage / c.tp;
    int64_t params = layer_params;
    if (st == 0)
      params += (l.padded_vocab * m.hidden) / c.tp + (pc.embedding - l.padded_vocab * m.hidden);
    if (st == c.pp - 1) {
      params += pc.final_norm;
      if (!pc.tied || c.pp > 1) params += pc.output / c.tp;
    }
    sm.params = params;
    const double P = static_cast<double>(params);
    sm.weights_bytes = P * kWeightBytesPerParam;
    // FP8 GEMMs multiply FP8 weights. Where the weights are 16-bit, Transformer Engine keeps each
    // layer GEMM's FP8 copy and its transpose between micro-batches and steps (module/base.py
    // get_weight_workspace: the "weight" workspace of _fp8_workspaces): 2 B more per layer
    // parameter. Where they are FP8 (the stack's fp8_param_gather) the weight is that copy, 1 B
    // and its 1 B transpose, in the 2 B already counted. The embedding and output layer stay bf16.
    if (c.dtype == cost::Dtype::kFp8 && !c.fsdp && !(stack && stack->fp8_param_gather))
      sm.weights_bytes += 2.0 * static_cast<double>(layer_params);
    // The gradient buffer holds each element in the type it is reduced in.
    const double grad_bytes =
        c.grad_reduce_bytes(stack ? stack->grad_reduce_bytes : kGradBytesPerParam);
    sm.grads_bytes = P * grad_bytes;
    sm.optimizer_bytes =
        P * (kOptimizerBytesPerParam - (c.param_remainders ? kRemainderSavedBytes : 0)) /
        (c.distributed_optimizer || c.fsdp ? dp_shards : 1.0);
    if (c.fsdp) {  // sharded too, plus two layers' gathered weights and one layer's gradients
      // (the first stage gathers the embedding with its first layer, the last the output layer
      // with its last)
      double layer = static_cast<double>(pc.per_layer) / c.tp;
      if (st == 0 || st == c.pp - 1) layer += static_cast<double>(l.padded_vocab * m.hidden) / c.tp;
      sm.weights_bytes = sm.weights_bytes / dp_shards + 2 * layer * kWeightBytesPerParam;
      sm.grads_bytes = sm.grads_bytes / dp_shards + layer * grad_bytes;
    }
    // Micro-batches whose activations a stage holds at its peak (the schedule's warm-up); on the
    // first stage this is Megatron's p (1 + (p - 1) / (p v)).
    const double inflight = inflight_microbatches(st, c.pp, c.interleave, l.microbatches);
    sm.inflight_microbatches = inflight;
    double act = per_layer_act * static_cast<double>(layers_per_stage) * inflight;
    if (st == 0)  // token ids and the embedding's dropout mask (theoretical_memory_usage.py)
      act += (8 * s * b + s * b * h) * inflight / t;
    if (st == c.pp - 1)  // fp32 logits for the loss, and the final norm's input
      act += 4 * s * b * (h + static_cast<double>(l.padded_vocab)) / t;
    // Deferred output-layer weight gradients: until the drain after its last backward pass the
    // last stage keeps each deferred micro-batch's 16-bit logits gradient and the output layer's
    // input (its sequence-parallel shard, or the whole sequence without sequence parallelism):
    // Megatron-Core's grad_output_buffer and embedding_activation_buffer.
    if (const int64_t d = deferred_head_wgrad_count(c, l.microbatches); d > 0 && st == c.pp - 1)
      act += static_cast<double>(d) * 2 * s * b *
             (static_cast<double>(l.padded_vocab) / t + h / (c.sequence_parallel ? t : 1.0));
    sm.activations_bytes = act;
    // The optimizer step copies the 16-bit gradients it updates (its shard) to fp32 once the
    // activations are freed: the peak is the larger of the two.
    if (grad_bytes < 4 && !c.fsdp) {
      const double copies = 4 * P / (c.distributed_optimizer ? dp_shards : 1.0);
      sm.grads_bytes += std::max(0.0, copies - act);
    }
    out.push_back(sm);
  }
  return out;
}

}  // namespace lumos::model
