// How one training iteration is laid out over GPUs, Megatron style: tensor, context, pipeline and
// data parallel degrees, micro and global batch, the pipeline schedule, recomputation and GEMM
// precision; and the quantities derived from a layout (micro-batches, layers per virtual stage,
// padded vocabulary) once it has been checked against a model.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/attention_impl.hpp"
#include "cost/dtype.hpp"
#include "model/model_spec.hpp"

namespace lumos::model {

enum class Recompute { kNone, kSelective, kFull };
const char* to_string(Recompute r);
Recompute parse_recompute(const std::string& s);  // none | selective | full

// Bytes per parameter that 16-bit remainders save: of optimizer state, and of the optimizer
// step's writes.
constexpr double kRemainderSavedBytes = 2;

struct ParallelConfig {
  int tp = 1, cp = 1, pp = 1, dp = 1;
  int64_t mbs = 1;     // micro-batch size (sequences)
  int64_t gbs = 1;     // global batch size (sequences)
  int interleave = 1;  // virtual pipeline stages per GPU (1 = plain 1F1B)
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  // Fully sharded data parallel (ZeRO-3, Megatron-FSDP's optim_grads_params): weights, gradients
  // and optimizer state sharded over dp x cp; each layer's weights gathered before its forward and
  // its backward, its gradients reduce-scattered after its backward, every micro-batch.
  bool fsdp = false;
  // Megatron's account_for_{embedding,loss}_in_pipeline_split: the embedding and the loss count
  // as one layer each when layers are spread over virtual stages (Llama 3.1 405B: 126 + 2 = 128).
  bool split_counts_embedding = false;
  cost::Dtype dtype = cost::Dtype::kBf16;  // GEMM precision (activations stay 16-bit)
  // The software stack (kernels_db/stacks.json) that runs the layout; "" = the default stack.
  std::string stack;
  // Gradient reduction overlapped with the backward pass (Megatron's torch DDP or
  // --overlap-grad-reduce) or after it (its "local" DDP); unset = the stack's default.
  std::optional<bool> overlap_grad_reduce;
  // Tensor-parallel communication overlap with userbuffers (Transformer Engine, NeMo's
  // tp_comm_overlap): on, off (the stack's overlap without it), or unset = the stack's.
  std::optional<bool> tp_comm_overlap;
  // With userbuffers and FP8, the forward row-parallel GEMMs (attention projection, FC2) write
  // FP8 into the reduce-scatter's buffers and the reduce-scatter moves 1 B per element
  // (Transformer Engine's fp8_buf on proj_fprop and fc2_fprop, as NeMo's FP8 userbuffers configs
  // for H100 set it); off, Transformer Engine's default, they move bf16.
  bool tp_comm_fp8_reduce_scatter = false;
  // Delayed scaling's amax all-reduce over the stage's tensor and context-parallel ranks only
  // (Megatron-Core's tp_only_amax_red, which NeMo's GPT-3 175B performance script sets), where
  // by default it spans the data-parallel replicas too and waits for the last of them.
  bool tp_only_amax_reduction = false;
  // Gradients kept and reduced in fp32 (Megatron-Core's grad_reduce_in_fp32, NeMo's plugin
  // setting) or in the 16-bit parameter type; unset = the stack's. Sets both the gradient
  // buffer's bytes per parameter and the data-parallel reduction's message size.
  std::optional<bool> grad_reduce_in_fp32;
  // The optimizer keeps each fp32 master weight as the bf16 weight plus its 16-bit remainder
  // (Apex/Transformer Engine store_param_remainders; NeMo 1's distributed Adam with bf16 models):
  // 2 B of optimizer state per parameter in place of 4.
  bool param_remainders = false;
  // The attention kernels, where they differ from the stack's (a fused one: flash2, flash3 or
  // cudnn; Transformer Engine's NVTE_FUSED_ATTN=0 runs FlashAttention-2 in place of cuDNN).
  std::optional<cost::AttentionImpl> attention;
  // Megatron-Core's defer_embedding_wgrad_compute with wgrad_deferral_limit (NeMo's pipelined
  // Llama recipes set it: 22 on 70B, 50 on 405B): the output layer's weight-gradient GEMMs of the
  // first this many micro-batches leave their backward passes and run after the last one, on the
  // last pipeline stage, while the stages before it drain. 0: none (Megatron-Core's default);
  // kAllMicrobatches: every one (Megatron-Core's limit 0). Pipelines only.
  int64_t deferred_head_wgrads = 0;
  static constexpr int64_t kAllMicrobatches = INT64_MAX;
  int gpus_per_node = 8;

  int64_t gpus() const { return int64_t{tp} * cp * pp * dp; }
  // Bytes per gradient element: 4 or 2 where set, else the stack's.
  double grad_reduce_bytes(double stack_bytes) const {
    return grad_reduce_in_fp32 ? (*grad_reduce_in_fp32 ? 4.0 : 2.0) : stack_bytes;
  }
};

// What a checked layout implies.
struct Layout {
  int64_t microbatches = 0;           // per pipeline, per iteration: gbs / (dp * mbs)
  std::vector<int64_t> chunk_layers;  // layers of each virtual stage (model chunk c of stage
                                      // s is virtual stage c * pp + s)
  std::vector<int64_t> chunk_first_layer;
  int64_t layers_on_stage(int stage, int pp) const;
  int64_t padded_vocab = 0;           // Megatron pads to a multiple of 128 * tp
  int64_t tokens_per_microbatch = 0;  // mbs * seq / cp, per GPU
};

// Throws InputError with the first violated rule: degrees in [1, 2^16] and their product (GPUs)
// at most 2^20, gbs in [1, 2^24], mbs x seq x the widest activation per token within 2^56
// elements (so no derived count overflows), heads, KV heads, FFN and
// layers divisible by the degrees, gbs divisible by dp * mbs, interleaving only with pp > 1 and
// micro-batches a multiple of pp, sequence parallel only with tp > 1, seq divisible by 2 * cp,
// fp8 only on GPUs that have it (checked by the cost model).
Layout check_layout(const ModelSpec& m, const ParallelConfig& c);

// How many micro-batches' output-layer weight gradients the layout defers to the end of the
// pipeline (ParallelConfig::deferred_head_wgrads): none without a pipeline.
int64_t deferred_head_wgrad_count(const ParallelConfig& c, int64_t microbatches);

}  // namespace lumos::model
