// A stage's iteration as Megatron runs it: the distributed optimizer's parameter gathers, the
// forward and backward passes of each micro-batch and model chunk in the pipeline schedule's
// order (1F1B, interleaved), the gradient buckets reduced while the backward pass goes on (FSDP:
// per-layer gathers and reduce-scatters), recomputation, then the optimizer step.
#include <algorithm>
#include <string>

#include "model/step_graph_builder.hpp"

namespace lumos::model::detail {

// One stage's iteration: the parameter gathers of the distributed optimizer, the forward and
// backward passes in the pipeline schedule's order, then the optimizer step.
template <Pass P>
void Builder<P>::stage_iteration(int s) {
  stages_[static_cast<size_t>(s)].buckets.resize(static_cast<size_t>(c_.interleave));
  period_ = 0;
  gather_updated_params(s);
  const std::vector<PipelineTask> tasks = stage_schedule(s, c_.pp, c_.interleave, l_.microbatches);
  // Forwards before the first backward, less the first steady-state one.
  const auto first_bwd =
      std::find_if(tasks.begin(), tasks.end(), [](const PipelineTask& t) { return !t.forward; });
  const int64_t warmup = std::max<int64_t>(first_bwd - tasks.begin() - 1, 0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const PipelineTask& t = tasks[i];
    if (plan_)
      period_ = task_period(static_cast<int64_t>(i), warmup, static_cast<int64_t>(tasks.size()));
    // The kernels of one folded period, counted over the last built period's tasks.
    const bool counted = !kCount && plan_ && period_ == MicrobatchPlan::kBuiltPeriods;
    if (counted) period_compute_ = out_.compute_kernels, period_gpu_ = out_.gpu_kernels;
    if (t.forward)
      forward_pass(s, t);
    else
      backward_pass(s, t);
    if (counted) {
      auto add = [](std::vector<uint64_t>* acc, const std::vector<uint64_t>& before,
                    const std::vector<uint64_t>& after) {
        acc->resize(after.size(), 0);
        for (size_t k = 0; k < after.size(); ++k)
          (*acc)[k] += after[k] - (k < before.size() ? before[k] : 0);
      };
      add(&period_compute_total_, period_compute_, out_.compute_kernels);
      add(&period_gpu_total_, period_gpu_, out_.gpu_kernels);
    }
  }
  if (plan_) period_ = static_cast<int>(MicrobatchPlan::kBuiltPeriods + 1);
  if (deferred_ > 0 && s == c_.pp - 1) drain_head_wgrads(s);
  optimizer_step(s);
}

// A micro-batch's forward pass through one model chunk: receive the activations, embedding
// (first virtual stage), layers, head (last), send them on.
template <Pass P>
void Builder<P>::forward_pass(int s, const PipelineTask& t) {
  const int64_t j = int64_t{t.chunk} * c_.pp + s;
  const int64_t layers = layers_of(j);
  if (j > 0) {
    p2p(s, kRecvFwd, true, 0, t.microbatch, j);
    stream_wait(s, kRecvFwd, kComputeStream);
  }
  const double embed_end = params_.embed_end(j);
  stages_[static_cast<size_t>(s)].fsdp_copy_out.reset();
  if (fsdp_) fsdp_gather(s, j, 0, layers);
  if (j == 0) {
    if (fsdp_) use_gathered(s, j, 1, layers, true);
    wait_gathered(s, t.chunk, embed_end);
    kernels(s, k_.embed_fwd);
  }
  const Stage& st = stages_[static_cast<size_t>(s)];
  const auto ch = static_cast<size_t>(t.chunk);
  if (!fsdp_ && st.gathered_next[ch] == st.gathered[ch].size())  // no waits between layers
    layer_run(s, t.microbatch == 0 && first_microbatch_ops_ ? kFirstForwardLayer : kForwardLayer,
              layers);
  else
    for (int64_t i = 0; i < layers; ++i) {
      if (fsdp_ && !(j == 0 && i == 0)) use_gathered(s, j, i + 1, layers, true);
      wait_gathered(s, t.chunk, params_.layer_end(j, i));
      kernels(s, k_.layer_fwd, t.microbatch == 0);
    }
  // The bucket that holds the head alone (param_plan.cpp) is needed by now too.
  wait_gathered(s, t.chunk, 1e300);
  if (j == last_vs_) kernels(s, k_.head_fwd);
  if (j < last_vs_) {
    stream_wait(s, kComputeStream, kSendFwd);
    p2p(s, kSendFwd, false, 0, t.microbatch, j + 1);
    if (k_.stack->p2p_blocking) stream_wait(s, kSendFwd, kComputeStream);
  }
}

// A micro-batch's backward pass through one model chunk, in reverse: receive the gradients,
// head, layers (recomputed first if so), embedding, send them on. The last micro-batch fills
// the gradient buckets (FSDP reduce-scatters every layer's gradients instead).
template <Pass P>
void Builder<P>::backward_pass(int s, const PipelineTask& t) {
  const int64_t j = int64_t{t.chunk} * c_.pp + s;
  const int64_t layers = layers_of(j);
  const bool last_mb = t.microbatch == l_.microbatches - 1;
  Buckets& b = stages_[static_cast<size_t>(s)].buckets[static_cast<size_t>(t.chunk)];
  if (j < last_vs_) {
    p2p(s, kRecvBwd, true, 1, t.microbatch, j);
    stream_wait(s, kRecvBwd, kComputeStream);
  }
  if (fsdp_) fsdp_gather(s, j, layers - 1, layers);
  if (j == last_vs_) {
    if (fsdp_) use_gathered(s, j, layers - 2, layers, false);
    kernels(s, k_.head_bwd, false, t.microbatch < deferred_);
    if (last_mb && !fsdp_) grads_ready(s, &b, j);
  }
  // Layers that fill no gradient bucket and wait for no gather run one after another.
  int64_t top = layers - 1;
  if (!fsdp_ && !last_mb) {
    const int64_t plain =
        j == 0 ? std::max<int64_t>(layers - 1, 0) : layers;  // the first layer adds the embedding's
    layer_run(s, kBackwardLayer, plain);
    top -= plain;
  }
  for (int64_t i = top; i >= 0; --i) {
    if (fsdp_ && !(j == last_vs_ && i == layers - 1)) use_gathered(s, j, i - 1, layers, false);
    kernels(s, k_.layer_recompute);
    kernels(s, k_.layer_bwd);
    if (j == 0 && i == 0) kernels(s, k_.embed_bwd);
    if (fsdp_)
      fsdp_reduce(s, j, i, layers);
    else if (last_mb)
      grads_ready(s, &b, j);
  }
  if (last_mb && !fsdp_) grads_ready(s, &b, j);
  if (j > 0) {
    stream_wait(s, kComputeStream, kSendBwd);
    p2p(s, kSendBwd, false, 1, t.microbatch, j - 1);
    if (k_.stack->p2p_blocking) stream_wait(s, kSendBwd, kComputeStream);
  }
}

// Distributed optimizer: the parameters the previous step's optimizer updated are gathered
// back, bucket by bucket, while the forward pass starts (Megatron's overlap_param_gather);
// a chunk's first forward waits, before each layer, for the buckets that hold it. The buckets are
// the chunk's gradient buckets in forward order (param_plan.cpp): embedding, layers, head.
template <Pass P>
void Builder<P>::gather_updated_params(int s) {
  Stage& st = stages_[static_cast<size_t>(s)];
  st.gathered.resize(static_cast<size_t>(c_.interleave));
  st.gathered_next.assign(static_cast<size_t>(c_.interleave), 0);
  if (!params_.gathers) return;
  for (int64_t ch = 0; ch < c_.interleave; ++ch) {
    const auto j = static_cast<size_t>(ch * c_.pp + s);
    for (uint32_t site = params_.gather_first[j]; site < params_.gather_first[j + 1]; ++site) {
      kernel(s, kGradStream, param_gather(params_.value[site]), Src::kParamGather, site);
      st.gathered[static_cast<size_t>(ch)].push_back(
          {params_.gather_end[site - params_.gather_first[0]], record_event(s, kGradStream)});
    }
  }
}

// The compute stream waits for the gathered buckets of chunk `ch` that start before parameter
// offset `upto` (each bucket once).
template <Pass P>
void Builder<P>::wait_gathered(int s, int64_t ch, double upto) {
  Stage& st = stages_[static_cast<size_t>(s)];
  const auto& list = st.gathered[static_cast<size_t>(ch)];
  size_t& k = st.gathered_next[static_cast<size_t>(ch)];
  while (k < list.size() && (k == 0 || list[k - 1].end < upto))
    wait_event(s, list[k++].done, kComputeStream);
}

// FSDP: a layer's weights (with the embedding on the first virtual stage and the head on the
// last) are gathered before use and its gradients reduce-scattered after its backward.
template <Pass P>
void Builder<P>::fsdp_gather(int s, int64_t j, int64_t i, int64_t layers) {
  const uint32_t site = share_site(j, i, layers);
  kernel(s, kGatherStream, param_gather(params_.value[site]), Src::kParamGather, site);
}

// The compute stream waits for the gather just issued, then the next layer's is prefetched.
// The gathers run at most a layer ahead of the compute, as FSDP2 (fully_shard) holds them: its
// all-gather streams wait on the compute stream's copy-out of a gathered layer, in the backward
// pass the one just made, in the forward pass the previous layer's (implicit prefetch keeps one
// all-gather result alive; FSDPParamGroup.wait_for_unshard). Without that wait the gathers ran
// ahead of the compute by a lead that grew over the micro-batches.
template <Pass P>
void Builder<P>::use_gathered(int s, int64_t j, int64_t next, int64_t layers, bool forward) {
  stream_wait(s, kGatherStream, kComputeStream);
  Stage& st = stages_[static_cast<size_t>(s)];
  if (!forward) {
    stream_wait(s, kComputeStream, kGatherStream);
  } else {
    if (st.fsdp_copy_out) wait_event(s, *st.fsdp_copy_out, kGatherStream);
    st.fsdp_copy_out = record_event(s, kComputeStream);
  }
  if (next >= 0 && next < layers) fsdp_gather(s, j, next, layers);
}

template <Pass P>
void Builder<P>::fsdp_reduce(int s, int64_t j, int64_t i, int64_t layers) {
  stream_wait(s, kComputeStream, kGradStream);
  const uint32_t site = share_site(j, i, layers);
  kernel(s, kGradStream, grad_reduce(params_.value[site]), Src::kGradReduce, site);
}

// One more term of chunk j's backward has its gradients (the head, a layer, the final flush):
// the bucket it completes (param_plan.cpp decides which) is reduced on the gradient stream after
// the compute that filled it.
template <Pass P>
void Builder<P>::grads_ready(int s, Buckets* b, int64_t j) {
  const uint32_t term = b->terms++;
  if (!params_.reduces) return;
  const uint32_t site = params_.grad_first[static_cast<size_t>(j)] + b->closed;
  if (site == params_.grad_first[static_cast<size_t>(j) + 1] ||
      params_.grad_close[site - params_.grad_first[0]] != term)
    return;
  ++b->closed;
  stream_wait(s, kComputeStream, kGradStream);
  kernel(s, kGradStream, grad_reduce(params_.value[site]), Src::kGradReduce, site);
}

// The collectives and the optimizer kernel, priced for their size; a counting pass needs only
// their number.
template <Pass P>
KernelOp Builder<P>::grad_reduce(double params) const {
  if constexpr (kCount)
    return {};
  else
    return k_.grad_reduce(params);
}

template <Pass P>
KernelOp Builder<P>::param_gather(double params) const {
  if constexpr (kCount)
    return {};
  else
    return k_.param_gather(params);
}

template <Pass P>
KernelOp Builder<P>::optimizer(double params) const {
  if constexpr (kCount)
    return {};
  else
    return k_.optimizer(params);
}

// Megatron-Core's drain_embedding_wgrad_compute, once the last stage's backward passes are done
// and before the gradients are finalized: the deferred micro-batches' output-layer weight
// gradients, one GEMM each, accumulated into the main gradient. Each GEMM's input is the
// sequence-parallel shard saved in forward, gathered again while the previous GEMM runs (not
// modelled, as the backward pass's own gather for the weight gradient is not). The head's gradient
// bucket was handed to the reduction when the last micro-batch's backward passed it, as
// Megatron-Core's gradient hooks do.
template <Pass P>
void Builder<P>::drain_head_wgrads(int s) {
  for (int64_t i = 0; i < deferred_; ++i)
    for (const KernelOp& op : k_.head_bwd)
      if (op.deferrable) kernel(s, kComputeStream, op);
}

// Tied embeddings: the first stage's embedding and the last stage's output layer are one
// weight, so their gradients are all-reduced between the two before the optimizer step.
template <Pass P>
bool Builder<P>::ties_embedding(int s) const {
  return c_.pp > 1 && pc_.tied && (s == 0 || s == c_.pp - 1);
}

// The optimizer waits for every gradient bucket and outgoing message, then updates this GPU's
// shard; the host synchronizes at the end of the iteration.
template <Pass P>
void Builder<P>::optimizer_step(int s) {
  for (int r : {kGradStream, kGatherStream, kTpStream, kSendFwd, kSendBwd, kRecvFwd, kRecvBwd})
    if (stages_[static_cast<size_t>(s)].last_gpu[static_cast<size_t>(r)] != kNone)
      stream_wait(s, r, kComputeStream);
  if (ties_embedding(s)) embedding_allreduce(s);
  const uint32_t site = params_.optimizer_site(s);
  const uint32_t last =
      kernel(s, kComputeStream, optimizer(params_.value[site]), Src::kOptimizer, site);
  const uint32_t sync = cpu_call(s, kSyncCall, k_.event_call_us);
  edge(last, sync, EdgeKind::kGpuToCpuSync, 0);
  meta(sync).sync = true;
  stage_end_.push_back(sync);
  steps_[static_cast<size_t>(s)].marker = stages_[static_cast<size_t>(s)].first_cpu;
}

// Called from the other files of the builder.
template void Builder<Pass::kBuild>::stage_iteration(int);
template void Builder<Pass::kCount>::stage_iteration(int);

}  // namespace lumos::model::detail
