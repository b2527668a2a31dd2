#include "estimate/published_runs_2025.hpp"

#include <string>

namespace lumos::estimate {

using namespace lumos::model;
namespace {

// One row of the two tables: the model by its dimensions over a base preset (its activation and
// block style), the layout as published, the measured step time.
struct Table2025Row {
  const char* label;
  const char* id;
  const char* base;  // preset: gelu (non-gated MLP, LayerNorm) or swiglu (Llama style)
  int64_t layers, hidden, ffn, heads, kv_heads, vocab, seq;
  int tp, cp, pp, dp, v;
  int64_t mbs, gbs;
  cost::Dtype dtype;
  Recompute recompute;
  double step_s;
};

PublishedRun run_of(const Table2025Row& t, const char* source, const char* gpu, const char* stack) {
  PublishedRun r;
  r.label = t.label;
  r.id = t.id;
  r.source = source;
  r.step_time_s = t.step_s;
  EstimateRequest& q = r.request;
  q.model = preset(t.base);
  ModelSpec& m = q.model;
  m.layers = t.layers, m.hidden = t.hidden, m.ffn = t.ffn, m.heads = t.heads;
  m.kv_heads = t.kv_heads, m.vocab = t.vocab, m.seq = t.seq, m.head_dim = t.hidden / t.heads;
  m.name = std::string(t.base) + " resized";
  q.gpu = gpu;
  ParallelConfig& c = q.cfg;
  c.tp = t.tp, c.cp = t.cp, c.pp = t.pp, c.dp = t.dp, c.interleave = t.v;
  c.mbs = t.mbs, c.gbs = t.gbs, c.dtype = t.dtype, c.recompute = t.recompute;
  c.stack = stack;
  r.model_options = "--model " + std::string(t.base) + " --layers " + std::to_string(t.layers) +
                    " --hidden " + std::to_string(t.hidden) + " --ffn " + std::to_string(t.ffn) +
                    " --heads " + std::to_string(t.heads) + " --kv-heads " +
                    std::to_string(t.kv_heads) + " --vocab " + std::to_string(t.vocab) + " --seq " +
                    std::to_string(t.seq);
  return r;
}

}  // namespace

void append_runs_2025(std::vector<PublishedRun>* v) {
  using cost::Dtype;
  constexpr Dtype B = Dtype::kBf16, F = Dtype::kFp8;
  constexpr Recompute N = Recompute::kNone, Full = Recompute::kFull;
  // NVIDIA dgxc-benchmarking v25.02.01 "Expected Performance" (NeMo 24.12 container, DGX H100):
  // train_step_timing of BF16/FP8 pairs of one layout. NeMo's performance recipes: sequence
  // parallel with TP, distributed optimizer, no recomputation (none is stated). Nemotron-4's
  // squared-ReLU MLP is a non-gated two-GEMM MLP like GeLU's, so it takes the GPT block.
  const Table2025Row dgxc[] = {
      {"dgxc Llama3.1-8B BF16, 8 GPUs",
       "dgxc_llama31_8b_bf16_8gpu",
       "llama3-8b",
       32,
       4096,
       14336,
       32,
       8,
       128256,
       8192,
       1,
       2,
       1,
       4,
       1,
       1,
       128,
       B,
       N,
       12.78},
      {"dgxc Llama3.1-8B BF16, 128 GPUs",
       "dgxc_llama31_8b_bf16_128gpu",
       "llama3-8b",
       32,
       4096,
       14336,
       32,
       8,
       128256,
       8192,
       1,
       2,
       1,
       64,
       1,
       1,
       2048,
       B,
       N,
       13.16},
      {"dgxc Llama3.1-8B FP8, 8 GPUs",
       "dgxc_llama31_8b_fp8_8gpu",
       "llama3-8b",
       32,
       4096,
       14336,
       32,
       8,
       128256,
       8192,
       1,
       2,
       1,
       4,
       1,
       1,
       128,
       F,
       N,
       9.44},
      {"dgxc Llama3.1-8B FP8, 128 GPUs",
       "dgxc_llama31_8b_fp8_128gpu",
       "llama3-8b",
       32,
       4096,
       14336,
       32,
       8,
       128256,
       8192,
       1,
       2,
       1,
       64,
       1,
       1,
       2048,
       F,
       N,
       9.73},
      {"dgxc Llama3.1-70B BF16, 64 GPUs",
       "dgxc_llama31_70b_bf16_64gpu",
       "llama3-70b",
       80,
       8192,
       28672,
       64,
       8,
       128256,
       8192,
       4,
       2,
       4,
       2,
       5,
       1,
       128,
       B,
       N,
       14.61},
      {"dgxc Llama3.1-70B BF16, 2048 GPUs",
       "dgxc_llama31_70b_bf16_2048gpu",
       "llama3-70b",
       80,
       8192,
       28672,
       64,
       8,
       128256,
       8192,
       4,
       2,
       4,
       64,
       5,
       1,
       4096,
       B,
       N,
       14.84},
      {"dgxc Llama3.1-70B FP8, 64 GPUs",
       "dgxc_llama31_70b_fp8_64gpu",
       "llama3-70b",
       80,
       8192,
       28672,
       64,
       8,
       128256,
       8192,
       4,
       2,
       4,
       2,
       5,
       1,
       128,
       F,
       N,
       10.46},
      {"dgxc Llama3.1-70B FP8, 2048 GPUs",
       "dgxc_llama31_70b_fp8_2048gpu",
       "llama3-70b",
       80,
       8192,
       28672,
       64,
       8,
       128256,
       8192,
       4,
       2,
       4,
       64,
       5,
       1,
       4096,
       F,
       N,
       10.99},
      {"dgxc Llama3.1-405B BF16, 576 GPUs",
       "dgxc_llama31_405b_bf16_576gpu",
       "llama3-405b",
       126,
       16384,
       53248,
       128,
       8,
       128256,
       8192,
       8,
       2,
       9,
       4,
       7,
       1,
       252,
       B,
       N,
       17.5},
      {"dgxc Llama3.1-405B FP8, 576 GPUs",
       "dgxc_llama31_405b_fp8_576gpu",
       "llama3-405b",
       126,
       16384,
       53248,
       128,
       8,
       128256,
       8192,
       8,
       2,
       9,
       4,
       7,
       1,
       252,
       F,
       N,
       11.0},
      {"dgxc Nemotron4-15B BF16, 16 GPUs",
       "dgxc_nemotron4_15b_bf16_16gpu",
       "gpt3-175b",
       32,
       6144,
       24576,
       48,
       8,
       256000,
       4096,
       4,
       1,
       1,
       4,
       1,
       4,
       64,
       B,
       N,
       2.812},
      {"dgxc Nemotron4-15B FP8, 16 GPUs",
       "dgxc_nemotron4_15b_fp8_16gpu",
       "gpt3-175b",
       32,
       6144,
       24576,
       48,
       8,
       256000,
       4096,
       4,
       1,
       1,
       4,
       1,
       4,
       64,
       F,
       N,
       2.039},
      {"dgxc Nemotron4-340B BF16, 128 GPUs",
       "dgxc_nemotron4_340b_bf16_128gpu",
       "gpt3-175b",
       96,
       18432,
       73728,
       96,
       8,
       256000,
       4096,
       8,
       1,
       8,
       2,
       12,
       1,
       32,
       B,
       N,
       4.61},
      {"dgxc Nemotron4-340B BF16, 2048 GPUs",
       "dgxc_nemotron4_340b_bf16_2048gpu",
       "gpt3-175b",
       96,
       18432,
       73728,
       96,
       8,
       256000,
       4096,
       8,
       1,
       8,
       32,
       12,
       1,
       512,
       B,
       N,
       4.84},
      {"dgxc Nemotron4-340B FP8, 128 GPUs",
       "dgxc_nemotron4_340b_fp8_128gpu",
       "gpt3-175b",
       96,
       18432,
       73728,
       96,
       8,
       256000,
       4096,
       8,
       1,
       8,
       2,
       12,
       1,
       32,
       F,
       N,
       3.16},
      {"dgxc Nemotron4-340B FP8, 2048 GPUs",
       "dgxc_nemotron4_340b_fp8_2048gpu",
       "gpt3-175b",
       96,
       18432,
       73728,
       96,
       8,
       256000,
       4096,
       8,
       1,
       8,
       32,
       12,
       1,
       512,
       F,
       N,
       3.49},
  };
  // NeMo 24.12 runs Transformer Engine's default FP8 recipe, delayed scaling: the nemo-2024 stack
  // (kernels_db/stacks.json), not Megatron-Bridge 25.x's current scaling.
  for (const Table2025Row& t : dgxc) {
    PublishedRun r = run_of(t, kDgxcSource, "h100", "nemo-2024");
    r.request.cfg.sequence_parallel = t.tp > 1;
    r.request.cfg.distributed_optimizer = true;
    if (t.base == std::string("gpt3-175b")) r.note = "squared-ReLU MLP modelled as GeLU's";
    // dgxc-benchmarking's llama3.1/pretrain_llama31.py sets the FP8 runs' precision plugin to
    // NeMo's bf16_with_fp8_mixed with grad_reduce_in_fp32 = False: their gradients are kept and
    // reduced in bf16, the BF16 runs' (the recipe's bf16_mixed) in fp32.
    // Its 70B and 405B FP8 runs take NeMo's userbuffers_fp8_h100_* configs, whose attention
    // projection and FC2 reduce-scatters have fp8_buf set (NeMo's
    // nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py).
    if (std::string(t.id).find("llama31") != std::string::npos && t.dtype == F) {
      r.request.cfg.grad_reduce_in_fp32 = false;
      r.note = "bf16 gradients (the script's FP8 plugin)";
      if (t.tp > 1) {
        r.request.cfg.tp_comm_fp8_reduce_scatter = true;
        r.note += "; FP8 reduce-scatter buffers (its userbuffers config)";
      }
    }
    // NeMo's Llama performance recipes, which dgxc-benchmarking's pretrain_llama31.py starts from
    // (pretrain_recipe(performance_mode=True)), defer the output layer's weight gradients to the
    // pipeline's end: MegatronCommOverlapCallback(defer_embedding_wgrad_compute=True,
    // wgrad_deferral_limit=22) in llama3_70b.py, 50 in llama31_405b.py
    // (nemo/collections/llm/recipes, pretrain_performance_optimizations).
    const std::string id = t.id;
    if (id.find("llama31_70b") != std::string::npos) r.request.cfg.deferred_head_wgrads = 22;
    if (id.find("llama31_405b") != std::string::npos) r.request.cfg.deferred_head_wgrads = 50;
    // Nemotron-4 340B alone keeps and reduces its gradients in bf16: dgxc-benchmarking ran
    // this table (the same step times under its 24.11 release, NeMo 24.09) with NeMo 1's
    // megatron_gpt_pretraining.py and nemotron/nemotron4-340b-synth.yaml, whose
    // distributed_fused_adam syncs gradients in bf16 (grad_sync_dtype) — as NeMo 2's
    // nemotron4_340b performance recipe does (grad_reduce_in_fp32 = False). NeMo 1 keeps that
    // optimizer's state in fp32 and, for a bf16 model, its master weights as 16-bit remainders
    // (megatron_base_model.py setup_optimization: store_param_remainders); with FP8 the
    // launcher's fp8_params makes it store full fp32 master weights (store_params). Its
    // nemotron/configure.sh sets NVTE_FUSED_ATTN=0 for 340B: FlashAttention-2 in place of cuDNN.
    if (std::string(t.id).find("nemotron4_340b") != std::string::npos) {
      r.request.cfg.grad_reduce_in_fp32 = false;
      r.request.cfg.param_remainders = t.dtype == B;
      r.request.cfg.attention = cost::AttentionImpl::kFlash2;
      r.note += t.dtype == B ? "; NeMo 1: bf16 gradients, 16-bit remainders, FlashAttention-2"
                             : "; NeMo 1: bf16 gradients, FlashAttention-2";
    }
    v->push_back(r);
  }
  // MosaicML llm-foundry's A100 80GB table (Composer with PyTorch FSDP FULL_SHARD, flash
  // attention, bf16): iteration time from the published tokens/s. MPT's GeLU MLP without biases
  // takes the GPT block; the eager-PyTorch FSDP stack of torchtitan runs it.
  const Table2025Row foundry[] = {
      {"llm-foundry MPT-1B, 8 GPUs",
       "mpt_a100_1b_8gpu_seq2048",
       "gpt3-175b",
       24,
       2048,
       8192,
       16,
       16,
       50368,
       2048,
       1,
       1,
       1,
       8,
       1,
       14,
       448,
       B,
       N,
       5.5908},
      {"llm-foundry MPT-3B, 8 GPUs",
       "mpt_a100_3b_8gpu_seq2048",
       "gpt3-175b",
       32,
       2560,
       10240,
       20,
       20,
       50368,
       2048,
       1,
       1,
       1,
       8,
       1,
       10,
       160,
       B,
       N,
       3.7886},
      {"llm-foundry MPT-7B, 8 GPUs",
       "mpt_a100_7b_8gpu_seq2048",
       "gpt3-175b",
       32,
       4096,
       16384,
       32,
       32,
       50368,
       2048,
       1,
       1,
       1,
       8,
       1,
       6,
       96,
       B,
       N,
       5.2951},
      {"llm-foundry MPT-13B, 8 GPUs",
       "mpt_a100_13b_8gpu_seq2048",
       "gpt3-175b",
       40,
       5120,
       20480,
       40,
       40,
       50368,
       2048,
       1,
       1,
       1,
       8,
       1,
       2,
       48,
       B,
       N,
       5.4321},
      {"llm-foundry MPT-30B, 8 GPUs",
       "mpt_a100_30b_8gpu_seq2048",
       "gpt3-175b",
       48,
       7168,
       28672,
       56,
       56,
       50368,
       2048,
       1,
       1,
       1,
       8,
       1,
       3,
       504,
       B,
       Full,
       140.8175},
      {"llm-foundry MPT-70B, 64 GPUs",
       "mpt_a100_70b_64gpu_seq2048",
       "gpt3-175b",
       80,
       8192,
       32768,
       64,
       64,
       50368,
       2048,
       1,
       1,
       1,
       64,
       1,
       8,
       2048,
       B,
       Full,
       159.6371},
  };
  for (const Table2025Row& t : foundry) {
    PublishedRun r =
        run_of(t, "mosaicml/llm-foundry scripts/train/benchmarking/README.md (A100 80GB)", "a100",
               "torchtitan");
    r.request.cfg.fsdp = true;
    r.note = "Composer FSDP modelled as torchtitan's eager FSDP stack";
    v->push_back(r);
  }
}

}  // namespace lumos::estimate
