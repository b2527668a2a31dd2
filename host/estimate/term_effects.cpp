#include "estimate/term_effects.hpp"

#include <algorithm>

#include "common/format.hpp"
#include "cost/gemm_model.hpp"
#include "model/fp8_amax_reduction.hpp"
#include "model/slowest_gpu.hpp"

namespace lumos::estimate {

using model::Term;

std::vector<TermEffect> term_effects(const EstimateRequest& req, const cost::KernelsDb& db,
                                     double step_us) {
  const cost::StackSpec& s = db.stack(req.cfg.stack.empty() ? db.default_stack : req.cfg.stack);
  const bool fp8 = req.cfg.dtype == cost::Dtype::kFp8;
  const bool tp = req.cfg.tp > 1, sp = tp && req.cfg.sequence_parallel;
  // Sequence-parallel gathers move FP8: their tensors are cast on the shard, transposed once
  // gathered.
  const bool gathered = sp && s.fp8.gather_fp8;
  const bool ub = model::runs_userbuffers(req.cfg, s);
  const std::string stack = "stacks.json " + s.name,
                    recipe = "stacks.json fp8_recipes." + s.fp8.name;
  std::vector<TermEffect> out;
  auto add = [&](Term t, bool applies, std::string value, std::string source) {
    TermEffect e;
    e.term = model::to_string(t);
    e.applies = applies;
    e.value = std::move(value);
    e.source = std::move(source);
    if (applies) {
      EstimateRequest q = req;
      q.options.without_terms |= 1u << static_cast<int>(t);
      e.step_without_us = run_estimate(q, db).estimate.step_time_us;
      e.added_us = step_us - e.step_without_us;
    }
    out.push_back(std::move(e));
  };
  add(Term::kStackFactor, s.kernel_time_factor != 1, strprintf("x%.3f", s.kernel_time_factor),
      stack + ".kernel_time_factor (fitted; its sources name the rows)");
  const int64_t gpus = req.cfg.gpus();
  const cost::GpuSpec& gpu = db.gpu(req.gpu);
  add(Term::kSlowestGpu, gpu.matmul_spread > 0 && gpus > 1,
      strprintf("%.0f%% in a node: slowest of %lld, x%.3f", 100 * gpu.matmul_spread,
                static_cast<long long>(gpus), model::slowest_gpu_matrix_factor(gpu, gpus)),
      "gpus.json " + gpu.name + ".matmul_spread");
  const double fast = cost::fp8_fprop_speedup(db, gpu, s.fp8);
  add(Term::kFp8FastAccum, fp8 && fast != 1,
      strprintf("forward GEMMs x%.2f faster than split accumulation", fast),
      recipe + ".fprop_fast_accum; gemm.json architectures." + to_string(gpu.arch) +
          ".fp8_fast_accum_speedup");
  add(Term::kFp8Casts, fp8,
      strprintf("%.0f/%.0f B in, %.0f/%.0f B grad", s.fp8.input_cast_bytes,
                s.fp8.fused_input_cast_bytes, s.fp8.grad_cast_bytes, s.fp8.fused_grad_cast_bytes) +
          (gathered ? strprintf("; shard %.0f/%.0f+%.0f", s.fp8.gathered_cast_bytes,
                                s.fp8.gathered_fused_cast_bytes, s.fp8.gathered_transpose_bytes)
                    : std::string(" per element")) +
          // The weight's bytes once per step: its cast, or where the weights are kept in FP8
          // (fp8_param_gather) its transpose.
          strprintf("; weight %.0f B",
                    s.fp8_param_gather ? s.fp8.primary_weight_bytes : s.fp8.weight_cast_bytes),
      recipe + " cast bytes; membound.json elementwise");
  add(Term::kFp8ScaleUpdates, fp8 && s.fp8.scale_update_kernels > 0,
      strprintf("%.0f kernels per chunk and pass", s.fp8.scale_update_kernels),
      recipe + ".scale_update_kernels; membound.json floor_us");
  add(Term::kFp8Gathers, fp8 && gathered, "1 B per element", recipe + ".gather_fp8; nccl.json");
  add(Term::kFp8ReduceScatters, fp8 && sp && ub && req.cfg.tp_comm_fp8_reduce_scatter,
      "1 B per element", "--tp-comm-fp8-reduce-scatter (Transformer Engine userbuffers fp8_buf)");
  const auto amax_ranks = static_cast<long long>(lumos::model::amax_reduction_ranks(req.cfg));
  const int replicas = lumos::model::amax_reduction_replicas(req.cfg);
  add(Term::kFp8AmaxReduction, fp8 && s.fp8.amax_reductions_per_pass > 0 && amax_ranks > 1,
      strprintf("%.0f per chunk and pass over %lld ranks%s%s", s.fp8.amax_reductions_per_pass,
                amax_ranks, req.cfg.tp_only_amax_reduction ? " (--tp-only-amax-red)" : "",
                s.fp8.replica_skew_us > 0 && replicas > 1 ? ", skew included" : ""),
      recipe + ".amax_reductions_per_pass; nccl.json");
  add(Term::kFp8ReplicaSkew,
      fp8 && s.fp8.amax_reductions_per_pass > 0 && s.fp8.replica_skew_us > 0 && replicas > 1,
      strprintf("last of %d replicas: %.0f us x %.2f per reduction", replicas,
                s.fp8.replica_skew_us, lumos::model::expected_max_of_normals(replicas)),
      recipe + ".replica_skew_us (fitted; its source names the rows)");
  const bool gathers =
      req.cfg.fsdp || (req.cfg.distributed_optimizer && req.cfg.dp * req.cfg.cp > 1);
  add(Term::kFp8ParamGathers, fp8 && s.fp8_param_gather && gathers, "1 B per parameter",
      stack + ".fp8_param_gather; nccl.json");
  add(Term::kTpUserbuffers, ub, strprintf("%d chunks", req.cfg.tp),
      stack + ".tp_overlap or --tp-comm-overlap");
  add(Term::kOverlapContention, tp || req.cfg.dp * req.cfg.cp > 1,
      strprintf("%d NCCL channels", db.nccl.channels), "nccl.json channels; gpus.json sms");
  add(Term::kOptimizerStep, true, strprintf("%.0f B/param", s.optimizer_bytes_per_param),
      stack + ".optimizer_bytes_per_param; membound.json optimizer");
  add(Term::kGradAccumulation, s.grad_accumulation_bytes > 0,
      strprintf("%.0f B/param per micro-batch", s.grad_accumulation_bytes),
      stack + ".grad_accumulation_bytes");
  add(Term::kSeparateProjections, model::projections_apart(s, req.model), "wq/wk/wv, w1/w3 apart",
      stack + ".separate_projections; gemm.json");
  {
    // Counted on the checked layout: the micro-batches per pipeline decide how many are deferred.
    const int64_t m = req.cfg.gbs / std::max<int64_t>(1, int64_t{req.cfg.dp} * req.cfg.mbs);
    const int64_t d = model::deferred_head_wgrad_count(req.cfg, m);
    add(Term::kDeferredHeadWgrads, d > 0,
        strprintf("%lld micro-batches' logits weight grads after the last backward",
                  static_cast<long long>(d)),
        "--defer-embedding-wgrad (Megatron-Core defer_embedding_wgrad_compute)");
  }
  add(Term::kHostLaunch, true, strprintf("%.0f us CPU per launch", db.training.cpu_launch_us),
      "training.json cpu_launch_us, launch_latency_us, event_call_us");
  return out;
}

}  // namespace lumos::estimate
