// The kernels of one training iteration, priced once: what one GPU of a pipeline stage runs for
// one layer's forward, backward and recomputation, for the embedding and the output head, the
// pipeline messages, the gradient buckets and the optimizer. Durations come from the cost model
// (GEMMs, FlashAttention, memory-bound kernels, NCCL collectives), FLOPs from the shapes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"

namespace lumos::model {

// kEmbedding: the first and last pipeline stages, whose tied embedding gradients are summed.
enum class CommGroup : uint8_t { kNone, kTp, kCp, kDp, kPp, kEmbedding };
constexpr int kNumCommGroups = 6;
const char* to_string(CommGroup g);

struct KernelOp {
  std::string name;
  double dur_us = 0;
  double model_flops = 0;              // counted by Megatron's formula
  double hw_flops = 0;                 // executed (recomputation included)
  CommGroup group = CommGroup::kNone;  // a collective when not kNone
  cost::Collective collective = cost::Collective::kAllReduce;
  int64_t nelems = 0;  // NCCL "In msg nelems"
  int64_t out_nelems = 0;
  int group_size = 1;
  // Where it runs: the compute stream, or the tensor-parallel side stream that Megatron's
  // column-parallel backward uses to overlap its collectives with the GEMMs. Before the op is
  // launched, `join`: the compute stream waits for the side stream's work so far; then `fork`:
  // the side stream waits for the compute stream's.
  bool side = false, fork = false, join = false;
  bool first_microbatch_only = false;  // FP8 weight casts: cached after the first micro-batch
  // The output layer's weight-gradient GEMM: left out of the backward passes of the micro-batches
  // that ParallelConfig::deferred_head_wgrads defers, and run for them after the last one.
  bool deferrable = false;
  std::optional<cost::GemmQuery> gemm;  // a GEMM's shape, for traces that can be repriced
  bool comm() const { return group != CommGroup::kNone; }
};

// The named terms of the model-driven step that `lumos estimate --explain` takes out one at a time
// to show what each adds (docs/design.md, "Named terms").
enum class Term : uint8_t {
  kStackFactor,          // the stack's fitted kernel_time_factor
  kFp8Casts,             // the FP8 recipe's operand and weight casts
  kFp8ScaleUpdates,      // delayed scaling's amax history and scale updates
  kFp8Gathers,           // sequence-parallel gathers in FP8 (taken out: in bf16)
  kFp8ReduceScatters,    // userbuffers reduce-scatters of FP8 GEMM outputs (taken out: in bf16)
  kFp8AmaxReduction,     // delayed scaling's amax all-reduce per model chunk and pass
  kFp8ParamGathers,      // parameter all-gathers of FP8 weights (taken out: in bf16)
  kTpUserbuffers,        // TP collectives pipelined with their GEMMs (taken out: the stack's rest)
  kOverlapContention,    // compute beside a collective slowed by the SMs it holds
  kOptimizerStep,        // the optimizer step's passes over parameters and state
  kGradAccumulation,     // a kernel per micro-batch adding weight gradients into main grads
  kHostLaunch,           // CPU time per launch, launch latency, event calls
  kSlowestGpu,           // matrix kernels at the pace of the job's slowest GPU
  kFp8FastAccum,         // FP8 forward GEMMs with fast accumulation (taken out: split, as tabled)
  kSeparateProjections,  // wq, wk, wv and w1, w3 as matmuls of their own (taken out: fused)
  kFp8ReplicaSkew,       // each amax all-reduce waiting for the last data-parallel replica
  kDeferredHeadWgrads,   // output-layer weight gradients after the last backward pass (taken
                         // out: in each micro-batch's backward)
};
constexpr int kNumTerms = 17;
const char* to_string(Term t);

// Whether the stack runs a layer's projections apart (stacks.json separate_projections): the
// gated (Llama) layer's wq, wk, wv and w1, w3; a GPT layer keeps its fused QKV.
bool projections_apart(const cost::StackSpec& stack, const ModelSpec& m);

// Whether the layout runs Transformer Engine's userbuffers (--tp-comm-overlap, else the stack's
// tp_overlap): they pipeline the sequence-parallel all-gathers and reduce-scatters with their
// GEMMs, so none without tensor and sequence parallelism (Megatron-Core refuses tp_comm_overlap
// without sequence parallelism).
bool runs_userbuffers(const ParallelConfig& c, const cost::StackSpec& stack);

// Knobs for tests and idealized what-ifs.
struct StepCostOptions {
  bool free_comm = false;        // collectives and pipeline messages take no time
  double uniform_kernel_us = 0;  // > 0: every layer compute kernel takes this long; the
                                 // embedding, head, optimizer and host overheads take none
  // Every tensor-parallel collective on the tensor-parallel stream, the compute stream waiting
  // for it before its next kernel (as stacks that give TP communication its own NCCL stream run
  // it): the same work in the same order, on another stream in the written trace.
  bool tp_comm_stream = false;
  uint32_t without_terms = 0;  // bit (1 << Term): price the step without that term
  bool with(Term t) const { return !(without_terms >> static_cast<int>(t) & 1u); }
};

struct StepCosts {
  std::vector<KernelOp> layer_fwd, layer_bwd;
  std::vector<KernelOp> layer_recompute;  // run before a layer's backward
  std::vector<KernelOp> embed_fwd, embed_bwd;
  std::vector<KernelOp> head_fwd, head_bwd;  // final norm, logits, loss on the last stage
  KernelOp p2p;                              // one activation or gradient message
  KernelOp embedding_allreduce;  // tied embedding gradients, first and last stage (pp > 1)
  double cpu_launch_us = 0, launch_latency_us = 0, event_call_us = 0;
  const cost::StackSpec* stack = nullptr;  // the software stack priced
  double grad_reduce_bytes = 4;
  double param_gather_bytes = 2;  // per parameter: 1 with FP8 weights (stack fp8_param_gather)
  double optimizer_bytes_per_param = 0;  // the stack's, less what 16-bit remainders save
  double bucket_params = 0;
  int dp_group = 1;  // ranks that reduce gradients (dp x cp)
  int dp_ranks_per_node = 1;
  // Multiply what grad_reduce / param_gather and optimizer price: a trace's calibration of
  // the kernels priced while the graph is built (whatif/trace_calibration.hpp).
  double dp_comm_scale = 1, optimizer_scale = 1;
  // Prices a gradient reduction (all-reduce, or reduce-scatter with the distributed optimizer)
  // and a parameter all-gather of `params` parameters.
  KernelOp grad_reduce(double params) const;
  KernelOp param_gather(double params) const;
  KernelOp optimizer(double params) const;

  const cost::KernelsDb* db = nullptr;
  const cost::GpuSpec* gpu = nullptr;
  const cost::Topology* topo = nullptr;
  bool distributed_optimizer = false;
  StepCostOptions opt;
};

StepCosts price_step(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                     const cost::KernelsDb& db, const cost::GpuSpec& gpu,
                     const cost::Topology& topo, const StepCostOptions& opt = {});

}  // namespace lumos::model
