#include "model/step_costs.hpp"

#include <algorithm>
#include <limits>

#include "cost/attention_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/memory_model.hpp"
#include "model/fp8_amax_reduction.hpp"
#include "model/slowest_gpu.hpp"

namespace lumos::model {

const char* to_string(CommGroup g) {
  switch (g) {
    case CommGroup::kNone:
      return "none";
    case CommGroup::kTp:
      return "tp";
    case CommGroup::kCp:
      return "cp";
    case CommGroup::kDp:
      return "dp";
    case CommGroup::kPp:
      return "pp";
    case CommGroup::kEmbedding:
      return "embedding";
  }
  return "?";
}

const char* to_string(Term t) {
  static const char* kNames[kNumTerms] = {"stack kernel_time_factor",
                                          "fp8 operand casts",
                                          "fp8 amax/scale updates",
                                          "fp8 all-gathers",
                                          "fp8 reduce-scatters",
                                          "fp8 amax reduction",
                                          "fp8 param gathers",
                                          "tp userbuffers",
                                          "overlap SM contention",
                                          "optimizer step",
                                          "grad accumulation",
                                          "host launch overhead",
                                          "slowest GPU",
                                          "fp8 fast accumulation",
                                          "separate projections",
                                          "fp8 replica skew",
                                          "deferred head wgrads"};
  return kNames[static_cast<int>(t)];
}

bool projections_apart(const cost::StackSpec& stack, const ModelSpec& m) {
  return stack.separate_projections && !m.gpt_style();
}

bool runs_userbuffers(const ParallelConfig& c, const cost::StackSpec& stack) {
  return c.tp > 1 && c.sequence_parallel &&
         c.tp_comm_overlap.value_or(stack.tp_overlap == cost::TpOverlap::kUserbuffers);
}

namespace {

using cost::Collective;

// A collective kernel of `ranks` GPUs (`per_node` of them sharing a node), priced by NCCL's
// model and named as NCCL names its kernels; free (zero time) when `free` or a single rank.
KernelOp priced_collective(const cost::KernelsDb& db, const cost::GpuSpec& gpu,
                           const cost::Topology& topo, CommGroup g, Collective type, double bytes,
                           int64_t in_nelems, int64_t out_nelems, int ranks, int per_node,
                           const char* dtype, bool free) {
  KernelOp op;
  op.group = g;
  op.collective = type;
  op.nelems = in_nelems;
  op.out_nelems = out_nelems;
  op.group_size = ranks;
  static const char* kNames[] = {"AllReduce_Sum", "AllGather", "ReduceScatter_Sum", "AllToAll",
                                 "Broadcast",     "Reduce",    "SendRecv"};
  op.name = "ncclDevKernel_" + std::string(kNames[static_cast<int>(type)]);
  if (type != Collective::kSendRecv) op.name += std::string("_") + dtype;
  if (free || ranks < 2) return op;
  cost::CollectiveQuery q;
  q.op = type;
  q.bytes = bytes;
  q.ranks = ranks;
  q.ranks_per_node = per_node;
  const auto e = cost::collective_time(db, gpu, topo, q);
  op.dur_us = e.time_us;
  if (type != Collective::kSendRecv)
    op.name += std::string("_") + cost::to_string(e.algo) + "_" + cost::to_string(e.proto);
  return op;
}

class Pricer {
 public:
  Pricer(const ModelSpec& m, const ParallelConfig& c, const Layout& l, const cost::KernelsDb& db,
         const cost::GpuSpec& gpu, const cost::Topology& topo, const cost::StackSpec& stack,
         double factor, double matrix_factor, double fprop_fp8_speedup)
      : m_(m),
        c_(c),
        l_(l),
        db_(db),
        gpu_(gpu),
        topo_(topo),
        stack_(stack),
        factor_(factor),
        matrix_factor_(factor * matrix_factor),
        fprop_fp8_speedup_(fprop_fp8_speedup) {
    const int gpn = std::max(1, topo.gpus_per_node);
    tp_per_node_ = std::min(c.tp, gpn);
    const int after_tp = std::max(1, gpn / c.tp);  // Megatron rank order: tp, cp, dp, pp
    cp_per_node_ = std::min(c.cp, after_tp);
    dp_per_node_ = std::min(c.dp * c.cp, after_tp);
    pp_per_node_ = int64_t{c.tp} * c.cp * c.dp >= gpn ? 1 : 2;
    // Megatron's rank order puts pipeline stages outermost (rank = stage x tp x cp x dp + i): the
    // first and last stage's ranks share nodes when all the job's GPUs fit in one.
    embedding_pair_per_node_ = int64_t{c.pp} * c.tp * c.cp * c.dp <= gpn ? 2 : 1;
  }

  // `fprop`: a layer's forward GEMM, which FP8 recipes run with fast accumulation.
  KernelOp gemm(const std::string& what, int64_t M, int64_t N, int64_t K, cost::Dtype dt,
                int64_t batch = 1, bool fprop = false) const {
    KernelOp op;
    const bool fp8 = dt == cost::Dtype::kFp8;
    op.name =
        std::string(fp8 ? "sm90_xmma_gemm_e4m3bf16_bf16f32" : "sm90_xmma_gemm_bf16bf16_bf16f32") +
        " (" + what + ")";
    op.gemm = cost::GemmQuery{M, N, K, batch, dt, fprop};
    const cost::GemmEstimate est = cost::gemm_time(db_, gpu_, *op.gemm);
    op.dur_us = est.time_us * matrix_factor_;
    // Fast accumulation speeds up the tensor cores' math, not a GEMM bound by its operands'
    // traffic.
    if (fp8 && fprop && !est.memory_bound) op.dur_us /= fprop_fp8_speedup_;
    op.model_flops = op.hw_flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) *
                                   static_cast<double>(K) * static_cast<double>(batch);
    return op;
  }
  KernelOp membound(const std::string& name, const std::string& cls, double bytes) const {
    KernelOp op;
    op.name = name;
    op.dur_us = cost::membound_time_us(db_, gpu_, cls, bytes) * factor_;
    return op;
  }
  KernelOp attention(bool backward) const {
    cost::AttentionQuery q;
    q.batch = c_.mbs;
    q.heads = m_.heads / c_.tp;
    q.seq = m_.seq;
    q.head_dim = m_.head_dim;
    q.causal = true;
    q.backward = backward;
    q.dtype = cost::Dtype::kBf16;
    q.impl = c_.attention.value_or(stack_.attention);
    KernelOp op;
    op.name = backward ? "flash_bwd_kernel" : "flash_fwd_kernel";
    // Context parallelism splits the queries evenly (load-balanced causal chunks).
    op.dur_us = cost::attention_time(db_, gpu_, q).time_us / c_.cp * matrix_factor_;
    const double fwd = 2.0 * static_cast<double>(c_.mbs) * static_cast<double>(m_.seq) *
                       static_cast<double>(m_.seq) * static_cast<double>(m_.q_size() / c_.tp) /
                       c_.cp;
    op.model_flops = op.hw_flops = backward ? 2 * fwd : fwd;
    return op;
  }
  KernelOp collective(CommGroup g, Collective type, double bytes, int64_t in_nelems,
                      int64_t out_nelems, const char* dtype) const {
    int ranks = 1, per_node = 1;
    switch (g) {
      case CommGroup::kTp:
        ranks = c_.tp, per_node = tp_per_node_;
        break;
      case CommGroup::kCp:
        ranks = c_.cp, per_node = cp_per_node_;
        break;
      case CommGroup::kDp:
        ranks = c_.dp * c_.cp, per_node = dp_per_node_;
        break;
      case CommGroup::kPp:
        ranks = 2, per_node = static_cast<int>(pp_per_node_);
        break;
      case CommGroup::kEmbedding:  // rank r of the first stage and r + (pp - 1) x tp x cp x dp
        ranks = 2, per_node = embedding_pair_per_node_;
        break;
      case CommGroup::kNone:
        break;
    }
    return priced_collective(db_, gpu_, topo_, g, type, bytes, in_nelems, out_nelems, ranks,
                             per_node, dtype, false);
  }

  const ModelSpec& m_;
  const ParallelConfig& c_;
  const Layout& l_;
  const cost::KernelsDb& db_;
  const cost::GpuSpec& gpu_;
  const cost::Topology& topo_;
  const cost::StackSpec& stack_;
  const double factor_;  // the stack's kernel_time_factor, or 1 without it
  // Matrix kernels (GEMMs, attention) also run at the job's slowest GPU (model/slowest_gpu.hpp).
  const double matrix_factor_;
  // FP8 forward GEMMs with fast accumulation (no periodic promotion to fp32) over the split
  // accumulation that the GEMM tables measured (docs/design.md, "FP8 fast accumulation").
  const double fprop_fp8_speedup_;
  int tp_per_node_ = 1, cp_per_node_ = 1, dp_per_node_ = 1;
  int64_t pp_per_node_ = 1;
  int embedding_pair_per_node_ = 1;
};

}  // namespace

KernelOp StepCosts::grad_reduce(double params) const {
  const auto n = static_cast<int64_t>(params);
  KernelOp op = priced_collective(
      *db, *gpu, *topo, CommGroup::kDp,
      distributed_optimizer ? Collective::kReduceScatter : Collective::kAllReduce,
      params * grad_reduce_bytes, n, distributed_optimizer ? n / dp_group : n, dp_group,
      dp_ranks_per_node, grad_reduce_bytes >= 4 ? "f32" : "bf16", opt.free_comm);
  op.dur_us *= dp_comm_scale;
  return op;
}

KernelOp StepCosts::param_gather(double params) const {
  const auto n = static_cast<int64_t>(params);
  KernelOp op =
      priced_collective(*db, *gpu, *topo, CommGroup::kDp, Collective::kAllGather,
                        params * param_gather_bytes, n / dp_group, n, dp_group, dp_ranks_per_node,
                        param_gather_bytes < 2 ? "fp8" : "bf16", opt.free_comm);
  op.dur_us *= dp_comm_scale;
  return op;
}

KernelOp StepCosts::optimizer(double params) const {
  KernelOp op;
  op.name = "multi_tensor_apply_kernel (adam)";
  if (opt.uniform_kernel_us <= 0 && params > 0 && opt.with(Term::kOptimizerStep))
    op.dur_us = optimizer_scale * (opt.with(Term::kStackFactor) ? stack->kernel_time_factor : 1.0) *
                cost::membound_time_us(*db, *gpu, "optimizer", params * optimizer_bytes_per_param);
  return op;
}

namespace {

// A layer's share of its chunk's amax history and scale update kernels (Transformer Engine's
// delayed scaling).
constexpr const char* kScaleUpdateShare = "fused_amax_and_scale_update (share)";

// Compute kernels that run while a collective on another stream does: (list, compute index,
// collective index).
struct Overlap {
  std::vector<KernelOp>* ops;
  size_t compute, comm;
};

// Prices one GPU's kernels of a layout into StepCosts' lists, list by list in the order the
// lists run their ops. The members are the layer's dimensions as one GPU of a stage sees them
// (named as in Megatron's formulas: T tokens per micro-batch, h hidden, q and kv projection
// sizes, f MLP inner size, V padded vocabulary, t tensor-parallel degree).
class StepPricer {
 public:
  StepPricer(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
             const cost::KernelsDb& db, const cost::GpuSpec& gpu, const cost::Topology& topo,
             const StepCostOptions& opt)
      : c(c),
        db(db),
        gpu(gpu),
        topo(topo),
        opt(opt),
        stack(db.stack(c.stack.empty() ? db.default_stack : c.stack)),
        P(m, c, l, db, gpu, topo, stack,
          opt.with(Term::kStackFactor) ? stack.kernel_time_factor : 1.0,
          opt.with(Term::kSlowestGpu) ? slowest_gpu_matrix_factor(gpu, c.gpus()) : 1.0,
          opt.with(Term::kFp8FastAccum) ? fp8_fprop_speedup(db, gpu, stack.fp8) : 1.0),
        t(c.tp),
        sp(c.sequence_parallel),
        T(l.tokens_per_microbatch),
        h(m.hidden),
        q(m.q_size()),
        kv(m.kv_size()),
        f(m.ffn),
        V(l.padded_vocab),
        pc(parameter_counts(m, V)),
        Tn(sp ? T / t : T),
        hb(static_cast<double>(T * h) * 2),
        dt(c.dtype),
        gpt(m.gpt_style()),
        norm(gpt ? "layer_norm" : "rmsnorm"),
        swiglu(m.act == Activation::kSwiglu),
        fc1_n(f * (swiglu ? 2 : 1) / t),
        fused(stack.fused_kernels),
        separate(projections_apart(stack, m) && opt.with(Term::kSeparateProjections)),
        norm_casts(stack.fp8_cast_fusion != cost::Fp8CastFusion::kNone),
        activation_casts(stack.fp8_cast_fusion == cost::Fp8CastFusion::kNormAndActivation),
        norm_b(fused ? 4.0 : stack.eager_norm_bytes),
        act(swiglu ? "swiglu" : "gelu"),
        act_fwd_b(fused ? (swiglu ? 6 : 4) : stack.eager_act_bytes),
        act_bwd_b(fused ? (swiglu ? 10 : 6) : 2 * stack.eager_act_bytes),
        rope_b(fused ? 4.0 : stack.eager_rope_bytes),
        act_dt(dt == cost::Dtype::kFp8 ? cost::Dtype::kBf16 : dt),
        unfused(stack.attention == cost::AttentionImpl::kUnfused),
        heads_l(m.heads / t),
        sq(m.seq / c.cp),
        sk(m.seq),
        d(m.head_dim),
        bh(c.mbs * heads_l),
        scores(static_cast<double>(bh) * static_cast<double>(sq) * static_cast<double>(sk)),
        fp8(dt == cost::Dtype::kFp8),
        fp8_gather(fp8 && stack.fp8.gather_fp8 && opt.with(Term::kFp8Gathers)),
        fp8_scatter(fp8 && sp && c.tp_comm_fp8_reduce_scatter &&
                    opt.with(Term::kFp8ReduceScatters)),
        ub(runs_userbuffers(c, stack) && opt.with(Term::kTpUserbuffers)),
        overlap_tp(t > 1 && (ub || stack.tp_overlap != cost::TpOverlap::kNone)),
        kv_bytes(static_cast<double>(T * 2 * kv / t) * 2),
        amax_share(fp8_amax_reduction_share(db, gpu, topo, stack.fp8, c, m.layers, opt.free_comm,
                                            opt.with(Term::kFp8ReplicaSkew))),
        chunk_layers(layers_per_model_chunk(c, m.layers)) {}

  StepCosts price() {
    StepCosts s;
    s.db = &db, s.gpu = &gpu, s.topo = &topo;
    s.stack = &stack;
    s.opt = opt;
    s.distributed_optimizer = c.distributed_optimizer || c.fsdp;
    layer_forward(s.layer_fwd);
    layer_backward(s.layer_bwd);
    apply_joins();
    recomputation(&s);
    embedding_and_head(&s);
    messages_and_buckets(&s);
    idealize_all(&s);
    overlap_slowdown(&s);
    if (opt.tp_comm_stream) tp_collectives_apart(&s);
    return s;
  }

 private:
  // Megatron's "g" in forward.
  void tp_scatter(std::vector<KernelOp>& ops) const {
    if (t > 1) ops.push_back(scatter_op());
  }
  KernelOp scatter_op() const {
    return sp ? P.collective(CommGroup::kTp, Collective::kReduceScatter, hb, T * h, Tn * h, "bf16")
              : P.collective(CommGroup::kTp, Collective::kAllReduce, hb, T * h, T * h, "bf16");
  }
  // Megatron's "f" in forward (sequence parallel only). A GEMM input or output gradient that
  // the FP8 recipe quantizes before the gather (`gemm_input`) moves 1 B per element.
  void tp_gather(std::vector<KernelOp>& ops, bool gemm_input = false) const {
    if (t > 1 && sp) ops.push_back(gather_op(gemm_input));
  }
  KernelOp gather_op(bool gemm_input) const {
    const bool q8 = gemm_input && fp8_gather;
    return P.collective(CommGroup::kTp, Collective::kAllGather, q8 ? hb / 2 : hb, Tn * h, T * h,
                        q8 ? "fp8" : "bf16");
  }

  // Userbuffers (docs/design.md, "Tensor-parallel overlap"): a collective split into one chunk per
  // tensor-parallel peer and pipelined with the GEMM that consumes (all-gather) or produces
  // (reduce-scatter) it. The first gathered chunk, and the last reduced one, are exposed; the
  // other chunks run on the side stream beside the GEMM, which slows by the SMs they hold.
  static KernelOp chunk(KernelOp op, double share) {
    op.dur_us *= share;
    op.nelems = static_cast<int64_t>(static_cast<double>(op.nelems) * share);
    op.out_nelems = static_cast<int64_t>(static_cast<double>(op.out_nelems) * share);
    return op;
  }
  void gathered_gemm(std::vector<KernelOp>& ops, KernelOp ag, const KernelOp& gemm) {
    const double head = 1.0 / t;
    ops.push_back(chunk(ag, head));
    KernelOp rest = chunk(ag, 1 - head);
    rest.side = rest.fork = true;
    ops.push_back(rest);
    ops.push_back(gemm);
    overlaps.push_back({&ops, ops.size() - 1, ops.size() - 2});
    join_after.push_back({&ops, ops.size() - 1, 0});
  }
  void scattered_gemm(std::vector<KernelOp>& ops, const KernelOp& gemm, KernelOp rs) {
    const double tail = 1.0 / t;
    KernelOp rest = chunk(rs, 1 - tail);
    rest.side = rest.fork = true;
    ops.push_back(rest);
    ops.push_back(gemm);
    overlaps.push_back({&ops, ops.size() - 1, ops.size() - 2});
    KernelOp last = chunk(rs, tail);
    last.join = true;
    ops.push_back(last);
  }
  // A GEMM with the sequence-parallel gather before it (`gather`) or the scatter after it, as the
  // stack runs them: pipelined with userbuffers, else in turn on the compute stream.
  void tp_gemm(std::vector<KernelOp>& ops, bool gather, const KernelOp& gemm) {
    if (t == 1 || (gather && !sp)) {
      ops.push_back(gemm);
      if (!gather) tp_scatter(ops);
      return;
    }
    KernelOp comm = gather ? gather_op(true) : scatter_op();
    if (!gather && ub && fp8_scatter)
      comm = P.collective(CommGroup::kTp, Collective::kReduceScatter, hb / 2, T * h, Tn * h, "fp8");
    if (!ub) {
      if (gather) ops.push_back(comm);
      ops.push_back(gemm);
      if (!gather) ops.push_back(comm);
      return;
    }
    if (gather)
      gathered_gemm(ops, comm, gemm);
    else
      scattered_gemm(ops, gemm, comm);
  }
  void apply_joins() {
    for (const Overlap& o : join_after)
      if (o.compute + 1 < o.ops->size()) (*o.ops)[o.compute + 1].join = true;
  }

  // Fused stacks run a norm as one kernel (read x, write y; backward reads x and dy, writes dx);
  // eager stacks run PyTorch's several ops over the same elements (stack's bytes per element).
  KernelOp norm_fwd() const {
    return P.membound(norm + "_fwd_kernel", "norm", norm_b * static_cast<double>(Tn * h));
  }
  KernelOp norm_bwd() const {
    return P.membound(norm + "_bwd_kernel", "norm",
                      (fused ? 6.0 : 2 * norm_b) * static_cast<double>(Tn * h));
  }
  // Bias-dropout-add: read the input and the residual, write the sum (and a 1-byte dropout mask).
  KernelOp residual() const {
    return P.membound("elementwise_kernel (bias_dropout_add)", "elementwise",
                      (stack.dropout ? 7.0 : 6.0) * static_cast<double>(Tn * h));
  }
  // Rotary embeddings (Llama-style models) on the local queries and keys.
  KernelOp rope(bool backward) const {
    return P.membound(backward ? "rope_bwd_kernel" : "rope_fwd_kernel", "elementwise",
                      rope_b * static_cast<double>(T * (q + kv) / t));
  }

  // The attention core. Flash attention: one kernel per pass. Unfused (Megatron before flash
  // attention): the scores Q K^T as a batched GEMM over every (sequence, head), scale + causal
  // mask + softmax (one fused kernel, or masked_fill and softmax), dropout over the
  // probabilities, and the probabilities times V; each memory-bound kernel reads and writes the
  // b x heads x s x s scores in 16 bit (the dropout mask is 1 byte), and the full s x s is
  // computed even though it is causal. Backward: two batched GEMMs per product, the dropout and
  // softmax backward kernels.
  std::vector<KernelOp> attention_core(bool backward) const {
    std::vector<KernelOp> ops;
    if (!unfused) {
      ops.push_back(P.attention(backward));
      return ops;
    }
    // FLOPs counted as for flash attention (causal: half of the s x s products); executed: all.
    auto bmm = [&](const std::string& what, int64_t M, int64_t N, int64_t K) {
      KernelOp op = P.gemm(what, M, N, K, act_dt, bh);
      op.model_flops = op.hw_flops / 2;
      return op;
    };
    auto mem = [&](const std::string& name, const char* cls, double bytes_per_score) {
      return P.membound(name, cls, bytes_per_score * scores);
    };
    if (!backward) {
      ops.push_back(bmm("attention scores", sq, sk, d));
      if (stack.fused_softmax) {
        ops.push_back(mem("scaled_upper_triang_masked_softmax_fwd", "softmax", 4));
      } else {
        ops.push_back(mem("masked_fill_kernel (causal mask)", "elementwise", 4));
        ops.push_back(mem("softmax_warp_forward", "softmax", 4));
      }
      if (stack.dropout) ops.push_back(mem("fused_dropout_kernel (attention)", "elementwise", 5));
      ops.push_back(bmm("attention over values", sq, d, sk));
    } else {
      ops.push_back(bmm("attention over values data grad", sq, sk, d));
      ops.push_back(bmm("attention over values weight grad", sk, d, sq));
      if (stack.dropout)
        ops.push_back(mem("masked_scale_kernel (attention dropout bwd)", "elementwise", 5));
      ops.push_back(
          mem("scaled_upper_triang_masked_softmax_bwd", "softmax", stack.fused_softmax ? 6 : 10));
      ops.push_back(bmm("attention scores query grad", sq, d, sk));
      ops.push_back(bmm("attention scores key grad", sk, d, sq));
    }
    return ops;
  }
  // Context-parallel attention (docs/design.md, "Context parallelism"), in cp steps of flash
  // attention, one per KV chunk, as the stack moves the KV (stacks.json cp_rotation). `gather`
  // prices the all-gather of the whole KV (cp - 1 chunks in), `scatter` the reduce-scatter of its
  // gradients. Unfused attention gathers the KV before the core and reduce-scatters after it.
  void cp_attention(std::vector<KernelOp>& ops, const std::vector<KernelOp>& core,
                    const KernelOp& gather, const KernelOp& scatter, bool backward) {
    if (core.size() != 1) {
      if (backward) {
        append(ops, core);
        ops.push_back(scatter);
      } else {
        ops.push_back(gather);
        append(ops, core);
      }
      return;
    }
    if (stack.cp_rotation == cost::CpRotation::kAllGather)
      return allgather_attention(ops, core.front(), gather, scatter, backward);
    ring_attention(ops, core.front(), backward ? scatter : gather, backward);
  }
  KernelOp cp_step(const KernelOp& core) const {
    KernelOp step = chunk(core, 1.0 / c.cp);
    step.model_flops /= c.cp, step.hw_flops /= c.cp;
    return step;
  }
  // An exchange on the side stream beside the compute op pushed after it; with `wait`, the compute
  // stream first waits for what the side stream ran before.
  void beside_next(std::vector<KernelOp>& ops, KernelOp x, bool wait) {
    x.side = x.fork = true;
    x.join = wait;
    ops.push_back(x);
  }
  void next_beside(std::vector<KernelOp>& ops, const KernelOp& compute) {
    ops.push_back(compute);
    overlaps.push_back({&ops, ops.size() - 1, ops.size() - 2});
  }
  // Transformer Engine's ring (cp_comm_type "p2p", AttnFuncWithCPAndKVP2P): each step waits for
  // the exchange with the ring's neighbours that ran beside the step before it. Forward: cp - 1
  // exchanges, the i-th bringing step i + 1's KV chunk. Backward: cp exchanges, as a KV chunk
  // travels with the gradients accumulated for it: the KV chunk (beside the first step), the next
  // KV chunk and the gradients so far (2 chunks, the middle steps), the gradients alone (beside
  // the last step, waited for after it). `exchange` prices cp - 1 chunks.
  void ring_attention(std::vector<KernelOp>& ops, const KernelOp& core, const KernelOp& exchange,
                      bool backward) {
    const int n = c.cp;
    const int exchanges = backward ? n : n - 1;
    for (int i = 0; i < n; ++i) {
      KernelOp step = cp_step(core);
      if (i < exchanges) {
        const double chunks = backward && i > 0 && i + 1 < n ? 2 : 1;
        // Step i computes with what the exchange before brought.
        beside_next(ops, chunk(exchange, chunks / (n - 1)), i > 0);
        next_beside(ops, step);
      } else {
        step.join = true;  // the last KV chunk has arrived
        ops.push_back(step);
      }
    }
    if (backward) join_after.push_back({&ops, ops.size() - 1, 0});  // the gradients are back
  }
  // PyTorch's context_parallel with rotate method "allgather" (torchtitan's default;
  // torch.distributed.tensor.experimental._attention): the whole KV is all-gathered beside the
  // first step and the second waits for it, in forward and again in backward; in backward each
  // step's KV gradients (accumulated in fp32) go to the next rank after the step, beside the next
  // one, which waits for them once done, the last after the loop.
  void allgather_attention(std::vector<KernelOp>& ops, const KernelOp& core, const KernelOp& gather,
                           const KernelOp& scatter, bool backward) {
    const int n = c.cp;
    beside_next(ops, gather, false);
    next_beside(ops, cp_step(core));
    // One chunk of the gradients in fp32 (twice a 16-bit chunk's bytes): the share of the KV
    // gradients' reduce-scatter in fp32 that one exchange moves, so that a trace names its dtype.
    const KernelOp grads =
        chunk(P.collective(CommGroup::kCp, Collective::kReduceScatter, 2 * kv_bytes * n,
                           scatter.nelems, scatter.out_nelems, "f32"),
              1.0 / (n - 1));
    for (int i = 1; i < n; ++i) {
      if (backward) {
        beside_next(ops, grads, true);  // waits for the gather (then the gradients before)
        next_beside(ops, cp_step(core));
      } else {
        KernelOp step = cp_step(core);
        step.join = i == 1;  // the gathered KV
        ops.push_back(step);
      }
    }
    if (backward) {
      beside_next(ops, grads, true);
      join_after.push_back({&ops, ops.size() - 1, 0});  // the last gradients are back
    }
  }
  static void append(std::vector<KernelOp>& to, const std::vector<KernelOp>& ops) {
    to.insert(to.end(), ops.begin(), ops.end());
  }

  // FP8 GEMMs need their operands quantized, as the stack's FP8 recipe does it (stacks.json
  // fp8_recipes; docs/design.md, "FP8 recipes"): in forward the input, by a kernel of its own or
  // fused into the norm or activation that produced it (`fused`), and, on the first micro-batch
  // only (Transformer Engine caches FP8 weights across micro-batches), the weight, or where the
  // weights are kept in FP8 (fp8_param_gather) only its transpose; in backward
  // the output gradient. Delayed scaling also updates the amax histories and scales of the
  // rank's FP8 modules after each amax reduction (scale_update below).
  // A tensor that a sequence-parallel all-gather moves in FP8 (`gathered`: the norm's output
  // before QKV and FC1, the output gradient of the attention projection and FC2) is quantized
  // on the rank's shard of Tn rows, data only, and transposed once gathered (stacks.json
  // gathered_*_bytes).
  void quantize_fwd(std::vector<KernelOp>& ops, int64_t N, int64_t K, bool fused,
                    bool gathered = false) const {
    if (!fp8 || !opt.with(Term::kFp8Casts)) return;
    KernelOp w = stack.fp8_param_gather
                     ? P.membound("fp8_transpose_kernel (FP8 weight)", "elementwise",
                                  stack.fp8.primary_weight_bytes * static_cast<double>(N * K))
                     : P.membound("cast_transpose_fp8_kernel (weight)", "elementwise",
                                  stack.fp8.weight_cast_bytes * static_cast<double>(N * K));
    w.first_microbatch_only = true;
    ops.push_back(w);
    if (gathered_fp8(gathered)) return quantize_gathered(ops, K, fused);
    const double b = fused ? stack.fp8.fused_input_cast_bytes : stack.fp8.input_cast_bytes;
    if (b > 0)
      ops.push_back(P.membound(fused ? "fp8_transpose_kernel" : "cast_transpose_fp8_kernel",
                               "elementwise", b * static_cast<double>(T * K)));
  }
  void quantize_bwd(std::vector<KernelOp>& ops, int64_t N, bool fused,
                    bool gathered = false) const {
    if (!fp8 || !opt.with(Term::kFp8Casts)) return;
    if (gathered_fp8(gathered)) return quantize_gathered(ops, N, fused);
    const double b = fused ? stack.fp8.fused_grad_cast_bytes : stack.fp8.grad_cast_bytes;
    if (b > 0)
      ops.push_back(
          P.membound(fused ? "fp8_transpose_kernel (gradient)" : "cast_transpose_fp8_kernel",
                     "elementwise", b * static_cast<double>(T * N)));
  }
  bool gathered_fp8(bool gathered) const { return gathered && fp8_gather && sp && t > 1; }
  // Fused into the norm, the shard's bytes net into the transpose's kernel (they can be
  // negative: the norm writes FP8 in place of bf16).
  void quantize_gathered(std::vector<KernelOp>& ops, int64_t width, bool fused) const {
    const double w = static_cast<double>(width);
    const double shard_b =
        (fused ? stack.fp8.gathered_fused_cast_bytes : stack.fp8.gathered_cast_bytes) *
        static_cast<double>(Tn) * w;
    const double transpose_b = stack.fp8.gathered_transpose_bytes * static_cast<double>(T) * w;
    if (fused) {
      ops.push_back(
          P.membound("fp8_transpose_kernel", "elementwise", std::max(0.0, shard_b + transpose_b)));
      return;
    }
    ops.push_back(P.membound("cast_fp8_kernel (shard)", "elementwise", shard_b));
    ops.push_back(P.membound("fp8_transpose_kernel", "elementwise", transpose_b));
  }
  // Amax history and scale update: after each amax reduction, the recipe's kernels (Transformer
  // Engine: the amaxes concatenated, then one multi-tensor update of every FP8 module's history
  // and scales) of a few bytes each, which the launch floor prices; each layer of the chunk
  // carries its share, as it does the reduction's (a share is one op in the graph, so the host
  // launches one per layer where Transformer Engine launches two per chunk).
  void scale_update(std::vector<KernelOp>& ops) const {
    if (fp8 && opt.with(Term::kFp8AmaxReduction) && amax_share.dur_us > 0)
      ops.push_back(amax_share);
    if (!fp8 || !opt.with(Term::kFp8ScaleUpdates) || stack.fp8.scale_update_kernels <= 0) return;
    KernelOp update = P.membound(kScaleUpdateShare, "elementwise", 4096);
    update.dur_us *= stack.fp8.scale_update_kernels / chunk_layers;
    ops.push_back(update);
  }

  // Transformer Engine 1.x's checkpoint reruns a checkpointed layer from backward outside any
  // fp8_autocast (transformer_engine/pytorch/distributed.py, CheckpointFunction.backward: only
  // activation_recompute_forward's recompute phase), its modules reusing the forward's stashed
  // scales (get_old_fp8_meta_tensors_for_recompute): no autocast exits, so the recomputed layer
  // reduces no amaxes and updates no scales.
  void drop_amax_reductions(std::vector<KernelOp>& ops) const {
    ops.erase(std::remove_if(ops.begin(), ops.end(),
                             [&](const KernelOp& op) {
                               return op.name == amax_share.name || op.name == kScaleUpdateShare;
                             }),
              ops.end());
  }

  // The column-parallel projections of one layer input: QKV's and FC1's, each fused into one
  // GEMM (Megatron-Core's linear_qkv and linear_fc1), or one matmul per weight where the stack's
  // model runs them apart (stacks.json separate_projections: torchtitan's wq, wk, wv and w1, w3).
  struct Projection {
    std::string what;
    int64_t n;  // output columns on this GPU
  };
  std::vector<Projection> qkv_parts() const {
    if (!separate) return {{"qkv", (q + 2 * kv) / t}};
    return {{"q projection", q / t}, {"k projection", kv / t}, {"v projection", kv / t}};
  }
  std::vector<Projection> fc1_parts() const {
    if (!separate || !swiglu) return {{"fc1", fc1_n}};
    return {{"fc1 gate", f / t}, {"fc1 up", f / t}};
  }
  // Forward: the sequence-parallel gather once, then the GEMMs. Apart, each FP8 linear casts the
  // shared input itself (torchao's Float8Linear) unless the cast is fused into the norm before or
  // the input is cast once on the shard to be gathered in FP8 (torchao's PrepareFloat8ModuleInput).
  void column_projections(std::vector<KernelOp>& F, const std::vector<Projection>& parts,
                          bool casts_fused) {
    int64_t total = 0;
    for (const Projection& p : parts) total += p.n;
    if (casts_fused || parts.size() == 1 || gathered_fp8(true))
      quantize_fwd(F, total, h, casts_fused, true);
    else
      for (const Projection& p : parts) quantize_fwd(F, p.n, h, casts_fused, true);
    tp_gemm(F, true, P.gemm(parts[0].what, T, parts[0].n, h, dt, 1, true));
    for (size_t i = 1; i < parts.size(); ++i)
      F.push_back(P.gemm(parts[i].what, T, parts[i].n, h, dt, 1, true));
  }

  // Backward of a column-parallel linear (QKV, FC1) as Megatron overlaps it: with sequence
  // parallelism the saved input shard is all-gathered again on the side stream while the data
  // gradient GEMM runs; then the input gradient is reduce-scattered (all-reduced without sequence
  // parallelism) on the side stream while the weight gradient GEMM runs.
  // Stacks without tensor-parallel overlap run the same collectives on the compute stream.
  // Projections apart run as autograd does: each matmul's data and weight gradients in reverse
  // order, each input gradient after the first added into the sum (read two, write one; compiled
  // stacks sum them all in one kernel), then the sum's reduction.
  void column_parallel_bwd(std::vector<KernelOp>& ops, const std::vector<Projection>& parts) {
    // Megatron's and Transformer Engine's layers kept the input's shard and gather it again for
    // the weight gradient; PyTorch's DTensor kept it gathered (stacks.json sp_saved_input).
    const bool regather = t > 1 && sp && stack.sp_saved_input == cost::SpSavedInput::kShard;
    if (regather) {
      KernelOp ag = gather_op(true);
      ag.side = ag.fork = overlap_tp;
      ops.push_back(ag);
      if (overlap_tp) overlaps.push_back({&ops, ops.size(), ops.size() - 1});
    }
    KernelOp red;
    if (t > 1) {
      red = sp ? P.collective(CommGroup::kTp, Collective::kReduceScatter, hb, T * h, Tn * h, "bf16")
               : P.collective(CommGroup::kTp, Collective::kAllReduce, hb, T * h, T * h, "bf16");
      red.side = red.fork = overlap_tp;
    }
    if (parts.size() > 1) {
      // The reduction follows every weight gradient: nothing is left to run beside it.
      red.side = red.fork = false;
      const double grad_b = 2.0 * static_cast<double>(T * h);
      for (size_t i = parts.size(); i-- > 0;) {
        ops.push_back(P.gemm(parts[i].what + " data grad", T, h, parts[i].n, dt));
        KernelOp wgrad = P.gemm(parts[i].what + " weight grad", parts[i].n, h, T, dt);
        wgrad.join = regather && overlap_tp && i + 1 == parts.size();  // the gathered input
        ops.push_back(wgrad);
        if (!fused && i + 1 < parts.size())
          ops.push_back(
              P.membound("elementwise_kernel (input gradient sum)", "elementwise", 3 * grad_b));
      }
      if (fused)  // Inductor sums the gradients in one kernel: reads each, writes one
        ops.push_back(P.membound("triton_poi_fused_add (input gradient sum)", "elementwise",
                                 static_cast<double>(parts.size() + 1) * grad_b));
      if (t > 1) ops.push_back(red);
      return;
    }
    const Projection& p = parts[0];
    ops.push_back(P.gemm(p.what + " data grad", T, h, p.n, dt));
    if (t > 1) {
      red.join = regather && overlap_tp;  // the weight gradient needs the gathered input
      ops.push_back(red);
      if (overlap_tp) overlaps.push_back({&ops, ops.size(), ops.size() - 1});
    }
    ops.push_back(P.gemm(p.what + " weight grad", p.n, h, T, dt));
  }
  // The op after a column-parallel backward waits for its input gradient's reduction.
  KernelOp after_column_parallel(KernelOp op) const {
    op.join = overlap_tp;
    return op;
  }

  // The whole KV of a layer over the context-parallel group: gathered (forward's input), its
  // gradients reduce-scattered.
  KernelOp kv_gather() const {
    return P.collective(CommGroup::kCp, Collective::kAllGather, kv_bytes * c.cp, T * 2 * kv / t,
                        T * 2 * kv / t * c.cp, "bf16");
  }
  KernelOp kv_scatter() const {
    return P.collective(CommGroup::kCp, Collective::kReduceScatter, kv_bytes * c.cp,
                        T * 2 * kv / t * c.cp, T * 2 * kv / t, "bf16");
  }

  // Forward of one layer.
  void layer_forward(std::vector<KernelOp>& F) {
    scale_update(F);
    F.push_back(norm_fwd());
    column_projections(F, qkv_parts(), norm_casts);
    if (!gpt) F.push_back(rope(false));
    attn_fwd = attention_core(false);
    attn_ring_begin = F.size();
    if (c.cp > 1)
      cp_attention(F, attn_fwd, kv_gather(), kv_scatter(), false);
    else
      append(F, attn_fwd);
    attn_ring_end = F.size();
    quantize_fwd(F, h, q / t, false);
    tp_gemm(F, false, P.gemm("attention out", T, h, q / t, dt, 1, true));
    F.push_back(residual());
    F.push_back(norm_fwd());
    column_projections(F, fc1_parts(), norm_casts);
    F.push_back(
        P.membound(act + "_fwd_kernel", "elementwise", static_cast<double>(T * f / t) * act_fwd_b));
    quantize_fwd(F, h, f / t, activation_casts);
    tp_gemm(F, false, P.gemm("fc2", T, h, f / t, dt, 1, true));
    F.push_back(residual());
  }

  // Backward of one layer: the conjugate collectives, data and weight gradients.
  void layer_backward(std::vector<KernelOp>& B) {
    scale_update(B);
    quantize_bwd(B, h, false, true);
    tp_gemm(B, true, P.gemm("fc2 data grad", T, f / t, h, dt));
    B.push_back(P.gemm("fc2 weight grad", h, f / t, T, dt));
    B.push_back(
        P.membound(act + "_bwd_kernel", "elementwise", static_cast<double>(T * f / t) * act_bwd_b));
    quantize_bwd(B, fc1_n, activation_casts);
    column_parallel_bwd(B, fc1_parts());
    B.push_back(after_column_parallel(norm_bwd()));
    B.push_back(residual());
    quantize_bwd(B, h, false, true);
    tp_gemm(B, true, P.gemm("attention out data grad", T, q / t, h, dt));
    B.push_back(P.gemm("attention out weight grad", h, q / t, T, dt));
    if (c.cp > 1)
      cp_attention(B, attention_core(true), kv_gather(), kv_scatter(), true);
    else
      append(B, attention_core(true));
    if (!gpt) B.push_back(rope(true));
    quantize_bwd(B, (q + 2 * kv) / t, false);
    column_parallel_bwd(B, qkv_parts());
    B.push_back(after_column_parallel(norm_bwd()));
    B.push_back(residual());
    if (stack.grad_accumulation_bytes > 0 && opt.with(Term::kGradAccumulation))
      B.push_back(
          P.membound("elementwise_kernel (main_grad accumulation)", "elementwise",
                     stack.grad_accumulation_bytes * static_cast<double>(pc.per_layer) / t));
  }

  // Recomputation: the whole layer forward (full); selective: Megatron's attention core (under
  // context parallelism Transformer Engine's ring, its exchanges included), or torchtitan's
  // op-level policy: its save list holds mm, the attention kernel (context parallelism's ring
  // runs inside it) and reduce_scatter_tensor, and every second mm is recomputed anyway; every
  // other op reruns, the tensor-parallel all-gathers (sequence parallel) or all-reduces (not) too,
  // each on the compute stream. Its Llama layer runs seven matmuls (wq, wk, wv, wo, w1, w3, w2), so
  // wk, wo and w3 rerun; a GPT layer (MPT's fused Wqkv) four, so the attention projection and FC2.
  // What ran beside a collective in forward does so again.
  void recomputation(StepCosts* s) {
    auto rerun = [&](size_t begin, size_t end) {
      s->layer_recompute.assign(s->layer_fwd.begin() + static_cast<std::ptrdiff_t>(begin),
                                s->layer_fwd.begin() + static_cast<std::ptrdiff_t>(end));
      const size_t forward_overlaps = overlaps.size();
      for (size_t i = 0; i < forward_overlaps; ++i) {
        const Overlap o = overlaps[i];
        if (o.ops == &s->layer_fwd && o.compute >= begin && o.compute < end && o.comm >= begin &&
            o.comm < end)
          overlaps.push_back({&s->layer_recompute, o.compute - begin, o.comm - begin});
      }
    };
    // Where a recomputation that stops early stops (stacks.json recompute_early_stop): at FC2,
    // whose input is the last tensor backward reads; FC2, the collective after it and the
    // residual add are not rerun.
    size_t last_gemm = s->layer_fwd.size();
    for (size_t i = 0; i < s->layer_fwd.size(); ++i)
      if (s->layer_fwd[i].gemm && s->layer_fwd[i].gemm->batch == 1) last_gemm = i;
    size_t before_fc2 = last_gemm;  // and before the chunks pipelined with it (userbuffers)
    while (before_fc2 > 0 && s->layer_fwd[before_fc2 - 1].side) --before_fc2;
    const bool early_stop = stack.recompute_early_stop && last_gemm < s->layer_fwd.size();
    if (c.recompute == Recompute::kFull) {
      rerun(0, early_stop ? before_fc2 : s->layer_fwd.size());
      drop_amax_reductions(s->layer_recompute);
    }
    if (c.recompute == Recompute::kSelective) {
      if (stack.selective == cost::SelectiveRecompute::kAttentionCore) {
        if (c.cp > 1 && attn_fwd.size() == 1)
          rerun(attn_ring_begin, attn_ring_end);
        else
          s->layer_recompute = attn_fwd;
      } else {
        const size_t end = early_stop ? last_gemm + 1 : s->layer_fwd.size();
        int matmuls = 0;
        for (size_t i = 0; i < end; ++i) {
          KernelOp op = s->layer_fwd[i];
          if (op.first_microbatch_only) continue;
          op.side = op.fork = op.join = false;  // one after another on the compute stream
          if (op.comm()) {
            if (op.group != CommGroup::kTp || op.collective == Collective::kReduceScatter) continue;
            s->layer_recompute.push_back(op);
          } else if (op.gemm && op.gemm->batch == 1) {
            if (++matmuls % 2 == 0) s->layer_recompute.push_back(op);
          } else if (op.name.find("flash") == std::string::npos && !op.gemm) {
            s->layer_recompute.push_back(op);
          }
        }
      }
    }
    for (auto& op : s->layer_recompute) op.model_flops = 0;
  }

  // Embedding (first virtual stage) and output head (last virtual stage). The logits GEMM stays
  // in bf16 in FP8 recipes (Transformer Engine keeps the output layer in higher precision).
  void embedding_and_head(StepCosts* s) const {
    s->embed_fwd.push_back(
        P.membound("embedding_fwd_kernel", "embedding", 4.0 * static_cast<double>(T * h)));
    tp_scatter(s->embed_fwd);
    tp_gather(s->embed_bwd);
    s->embed_bwd.push_back(
        P.membound("embedding_bwd_kernel", "embedding", 8.0 * static_cast<double>(T * h)));
    s->head_fwd.push_back(norm_fwd());
    tp_gather(s->head_fwd);
    s->head_fwd.push_back(P.gemm("logits", T, V / t, h, cost::Dtype::kBf16));
    s->head_fwd.push_back(
        P.membound("cross_entropy_fwd_kernel", "loss", 4.0 * static_cast<double>(T * V / t)));
    if (t > 1)  // vocab-parallel cross entropy: max, sum of exponentials, target logit
      s->head_fwd.push_back(P.collective(CommGroup::kTp, Collective::kAllReduce,
                                         12.0 * static_cast<double>(T), 3 * T, 3 * T, "f32"));
    s->head_bwd.push_back(
        P.membound("cross_entropy_bwd_kernel", "loss", 4.0 * static_cast<double>(T * V / t)));
    s->head_bwd.push_back(P.gemm("logits data grad", T, h, V / t, cost::Dtype::kBf16));
    s->head_bwd.push_back(P.gemm("logits weight grad", V / t, h, T, cost::Dtype::kBf16));
    s->head_bwd.back().deferrable = true;
    tp_scatter(s->head_bwd);
    s->head_bwd.push_back(norm_bwd());
  }

  // The pipeline message, the tied embedding's all-reduce, the host's call costs and the
  // gradient buckets.
  void messages_and_buckets(StepCosts* s) const {
    const double grad_bytes = c.grad_reduce_bytes(stack.grad_reduce_bytes);
    // Pipeline messages: one activation (or its gradient) per micro-batch and stage boundary;
    // with sequence parallelism each tensor-parallel rank sends its own sequence shard.
    const int64_t msg = sp ? Tn * h : T * h;
    s->p2p = P.collective(CommGroup::kPp, Collective::kSendRecv, static_cast<double>(msg) * 2, msg,
                          msg, "bf16");

    // Tied embeddings (GPT): the embedding's gradients, as kept for the optimizer.
    if (pc.tied && c.pp > 1) {
      const int64_t n = V / t * h;
      s->embedding_allreduce =
          P.collective(CommGroup::kEmbedding, Collective::kAllReduce,
                       static_cast<double>(n) * grad_bytes, n, n, grad_bytes >= 4 ? "f32" : "bf16");
      if (opt.free_comm || opt.uniform_kernel_us > 0) s->embedding_allreduce.dur_us = 0;
    }

    const auto& tr = db.training;
    if (opt.with(Term::kHostLaunch)) {
      s->cpu_launch_us = tr.cpu_launch_us;
      s->launch_latency_us = tr.launch_latency_us;
      s->event_call_us = tr.event_call_us;
    }
    s->grad_reduce_bytes = grad_bytes;
    s->param_gather_bytes =
        fp8 && stack.fp8_param_gather && opt.with(Term::kFp8ParamGathers) ? 1.0 : 2.0;
    // With 16-bit remainders Adam writes the bf16 weight and its remainder (2 + 2 B) where it
    // wrote the fp32 master and the bf16 copy (4 + 2 B).
    s->optimizer_bytes_per_param =
        stack.optimizer_bytes_per_param - (c.param_remainders ? kRemainderSavedBytes : 0.0);
    s->dp_group = c.dp * c.cp;
    s->dp_ranks_per_node = P.dp_per_node_;
    // Without overlap the gradients are reduced once the backward pass is over: one bucket.
    s->bucket_params = c.overlap_grad_reduce.value_or(stack.grad_reduce_overlap)
                           ? std::max(tr.bucket_params, tr.bucket_params_per_dp_rank * s->dp_group)
                           : std::numeric_limits<double>::infinity();
  }

  // Idealized variants for tests and what-ifs.
  void idealize(std::vector<KernelOp>& ops, bool layer) const {
    for (auto& op : ops) {
      if (op.comm() && opt.free_comm) op.dur_us = 0;
      if (!op.comm() && opt.uniform_kernel_us > 0) op.dur_us = layer ? opt.uniform_kernel_us : 0;
      if (op.comm() && opt.uniform_kernel_us > 0 && !layer) op.dur_us = 0;
    }
  }
  void idealize_all(StepCosts* s) const {
    idealize(s->layer_fwd, true);
    idealize(s->layer_bwd, true);
    idealize(s->layer_recompute, true);
    idealize(s->embed_fwd, false);
    idealize(s->embed_bwd, false);
    idealize(s->head_fwd, false);
    idealize(s->head_bwd, false);
    if (opt.free_comm) s->p2p.dur_us = 0;
    if (opt.uniform_kernel_us > 0) s->cpu_launch_us = s->launch_latency_us = s->event_call_us = 0;
  }

  // Overlap is not free: an NCCL kernel holds one SM per channel, so compute that runs beside it
  // gets the other SMs ([INFERRED] from NCCL's one block per channel, kernels_db/nccl.json
  // channels) and slows by channels / (SMs - channels) for the overlapped time.
  void overlap_slowdown(StepCosts* s) const {
    if (!opt.with(Term::kOverlapContention)) return;
    const double contention =
        static_cast<double>(db.nccl.channels) / std::max(1, gpu.sms - db.nccl.channels);
    for (const Overlap& o : overlaps) {
      KernelOp& k = (*o.ops)[o.compute];
      k.dur_us += std::min(k.dur_us, (*o.ops)[o.comm].dur_us) * contention;
    }
    if (c.fsdp && s->dp_group > 1) {  // each layer's compute beside its gathers and reduce-scatter
      const double layer = static_cast<double>(pc.per_layer) / t;
      // The backward pass (recomputation included) runs beside one gather and one reduce-scatter
      // per layer, the forward beside one gather; weight casts of the first micro-batch aside.
      auto slow = [&](std::vector<std::vector<KernelOp>*> lists, double comm_us) {
        double compute_us = 0;
        for (auto* ops : lists)
          for (const auto& op : *ops)
            if (!op.comm() && !op.first_microbatch_only) compute_us += op.dur_us;
        if (compute_us <= 0) return;
        const double factor = 1 + std::min(compute_us, comm_us) / compute_us * contention;
        for (auto* ops : lists)
          for (auto& op : *ops)
            if (!op.comm() && !op.first_microbatch_only) op.dur_us *= factor;
      };
      slow({&s->layer_fwd}, s->param_gather(layer).dur_us);
      slow({&s->layer_recompute, &s->layer_bwd},
           s->param_gather(layer).dur_us + s->grad_reduce(layer).dur_us);
    }
  }

  // StepCostOptions::tp_comm_stream: each TP collective still on the compute stream moves to
  // the side stream after the compute stream's work so far (fork), and the op after it waits for
  // it (join), so the order of work is the same.
  static void tp_collectives_apart(StepCosts* s) {
    for (auto* ops : {&s->layer_fwd, &s->layer_bwd, &s->layer_recompute, &s->embed_fwd,
                      &s->embed_bwd, &s->head_fwd, &s->head_bwd})
      for (size_t i = 0; i < ops->size(); ++i) {
        KernelOp& op = (*ops)[i];
        if (op.group != CommGroup::kTp || op.side) continue;
        op.side = op.fork = true;
        if (i + 1 < ops->size()) (*ops)[i + 1].join = true;
      }
  }

  const ParallelConfig& c;
  const cost::KernelsDb& db;
  const cost::GpuSpec& gpu;
  const cost::Topology& topo;
  const StepCostOptions& opt;
  const cost::StackSpec& stack;
  const Pricer P;
  const int t;
  const bool sp;
  const int64_t T, h, q, kv, f, V;
  const ParamCounts pc;
  const int64_t Tn;  // tokens a norm or residual add sees
  const double hb;   // one activation tensor, bytes
  const cost::Dtype dt;
  const bool gpt;
  const std::string norm;
  const bool swiglu;
  const int64_t fc1_n;
  const bool fused;
  const bool separate;  // wq, wk, wv and w1, w3 as matmuls of their own (stacks.json)
  // FP8 casts fused into the norm before QKV and FC1, and into the activation before FC2 and
  // its backward (the stack's fp8_cast_fusion).
  const bool norm_casts, activation_casts;
  const double norm_b;
  const std::string act;
  const double act_fwd_b, act_bwd_b, rope_b;
  const cost::Dtype act_dt;
  const bool unfused;
  const int64_t heads_l, sq, sk, d, bh;
  const double scores;
  const bool fp8;
  const bool fp8_gather;   // sequence-parallel gathers of GEMM inputs in FP8
  const bool fp8_scatter;  // userbuffers reduce-scatters of forward GEMM outputs in FP8
  const bool ub;           // userbuffers: forward and row-parallel backward collectives pipelined
  const bool overlap_tp;
  const double kv_bytes;
  const KernelOp amax_share;       // a layer's share of its chunk's amax all-reduce, per pass
  const double chunk_layers;       // the layers of one model chunk
  std::vector<KernelOp> attn_fwd;  // the forward's attention core, recomputed by selective
  size_t attn_ring_begin = 0, attn_ring_end = 0;  // where it (its ring under CP) lies in forward
  std::vector<Overlap> overlaps;
  std::vector<Overlap> join_after;  // (list, GEMM index): the op after it waits for the side
};

}  // namespace

StepCosts price_step(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                     const cost::KernelsDb& db, const cost::GpuSpec& gpu,
                     const cost::Topology& topo, const StepCostOptions& opt) {
  return StepPricer(m, c, l, db, gpu, topo, opt).price();
}

}  // namespace lumos::model
