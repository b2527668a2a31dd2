#include "estimate/estimate.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/kernel_classifier.hpp"
#include "estimate/folded_estimate.hpp"
#include "model/flops.hpp"
#include "replay/step_report.hpp"

namespace lumos::estimate {

using namespace lumos::model;
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// One stage's breakdown over [0, end): Lumos's classes, with idle time called the bubble when
// there is a pipeline.
replay::Breakdown stage_breakdown(const StepGraph& sg, const replay::ReplayResult& r,
                                  const std::vector<graph::NodeId>& gpu_nodes, double end_us,
                                  bool pipelined) {
  replay::Breakdown b = replay::breakdown(sg.graph, r.start_us, r.finish_us, gpu_nodes, 0, end_us);
  if (pipelined) b.bubble_us = b.other_us, b.other_us = 0;
  return b;
}

// Builds the whole graph (every micro-batch, every layer) and replays it: the step time, each
// stage's end and breakdown, the kernel time by class and the graph's FLOPs.
void measure_graph(const EstimateRequest& req, const StepCosts& costs, const cost::KernelsDb& db,
                   EstimateRun* out) {
  EstimateRun& run = *out;
  Estimate& e = run.estimate;
  if (req.check_nodes) {
    const uint64_t up_to = std::min(req.count_nodes_up_to, kMaxStepGraphNodes);
    const StepGraphCount counted =
        count_step_graph(e.model, e.cfg, e.layout, costs, up_to, /*fold_layers=*/false);
    req.check_nodes(counted.nodes);
    run.step = build_step_graph(e.model, e.cfg, e.layout, costs, kMaxStepGraphNodes, false,
                                counted.nodes <= up_to ? &counted : nullptr);
  } else {
    run.step = build_step_graph(e.model, e.cfg, e.layout, costs);
  }
  const graph::Graph& g = run.step.graph;
  e.nodes = g.num_nodes();
  e.edges = g.num_edges();

  const auto t1 = std::chrono::steady_clock::now();
  run.replay = replay::reference_replay(g);
  e.replay_ms = ms_since(t1);

  for (graph::NodeId end : run.step.stage_end)
    e.step_time_us = std::max(e.step_time_us, run.replay.finish_us[end]);
  const double replicas = static_cast<double>(e.cfg.tp) * e.cfg.cp * e.cfg.dp;
  for (const auto& mt : run.step.meta) {  // build order: the sum needs no graph ids
    e.graph_model_flops += mt.model_flops;
    e.graph_hw_flops += mt.hw_flops;
  }
  e.graph_model_flops *= replicas;
  e.graph_hw_flops *= replicas;
  std::vector<std::vector<graph::NodeId>> gpu_nodes(static_cast<size_t>(e.cfg.pp));
  for (graph::NodeId n = 1; n < g.num_nodes(); ++n)
    if (run.step.meta_of(n).stage >= 0 && run.step.meta_of(n).stream >= 0)
      gpu_nodes[static_cast<size_t>(run.step.meta_of(n).stage)].push_back(n);
  for (int s = 0; s < e.cfg.pp; ++s) {
    StageReport sr;
    sr.stage = s;
    sr.rank = run.step.stage_rank[static_cast<size_t>(s)];
    sr.end_us = run.replay.finish_us[run.step.stage_end[static_cast<size_t>(s)]];
    sr.breakdown = stage_breakdown(run.step, run.replay, gpu_nodes[static_cast<size_t>(s)],
                                   e.step_time_us, e.cfg.pp > 1);
    e.breakdown += sr.breakdown.scaled(1.0 / e.cfg.pp);
    e.stages.push_back(sr);
  }
  std::map<uint32_t, std::string> class_of_name;
  std::map<std::string, double> by_class;
  for (const auto& nodes : gpu_nodes)
    for (graph::NodeId n : nodes) {
      if (g.dur_us[n] <= 0) continue;
      auto it = class_of_name.find(g.name[n]);
      if (it == class_of_name.end())
        it = class_of_name.emplace(g.name[n], cost::classify_kernel(db, g.names[g.name[n]])).first;
      by_class[it->second] += g.dur_us[n] / e.cfg.pp;
    }
  e.kernel_time_us.assign(by_class.begin(), by_class.end());
  std::sort(e.kernel_time_us.begin(), e.kernel_time_us.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  // The graph stands as its own measurement, so that it can be written, ingested and replayed
  // like a traced one.
  graph::Graph& mg = run.step.graph;
  mg.measured_start_us = run.replay.start_us;
  for (size_t st = 0; st < mg.steps.size(); ++st) mg.steps[st].measured_us = e.stages[st].end_us;
}

// What follows from the step time and the layout: throughput, FLOPs, utilization, the range of
// published runs, memory per stage.
void derive(const cost::StackSpec& stack, const cost::GpuSpec& gpu, const cost::KernelsDb& db,
            Estimate* out) {
  Estimate& e = *out;
  const double step_s = e.step_time_us * 1e-6;
  e.step_range = step_range(
      db, gpu.name, e.cfg.stack, static_cast<double>(e.cfg.gpus()),
      static_cast<double>(parameter_counts(e.model, e.layout.padded_vocab).total(e.model.layers)),
      e.step_time_us);
  const double gpus = static_cast<double>(e.cfg.gpus());
  e.tokens_per_s = static_cast<double>(e.cfg.gbs) * static_cast<double>(e.model.seq) / step_s;
  e.model_flops = megatron_model_flops(e.model, e.cfg.gbs, e.layout.padded_vocab);
  e.hardware_flops =
      hardware_flops(e.model, e.cfg.gbs, e.layout.padded_vocab, e.cfg.recompute, &stack);
  e.model_tflops_per_gpu = e.model_flops / step_s / gpus * 1e-12;
  e.hw_tflops_per_gpu = e.hardware_flops / step_s / gpus * 1e-12;
  e.mfu = e.model_tflops_per_gpu / e.peak_tflops;
  e.hfu = e.hw_tflops_per_gpu / e.peak_tflops;

  const auto mem = memory_per_stage(e.model, e.cfg, e.layout, &stack);
  e.memory_capacity_bytes = gpu.hbm_gib * 1024.0 * 1024.0 * 1024.0;
  double worst = -1;
  for (StageReport& sr : e.stages) {
    sr.memory = mem[static_cast<size_t>(sr.stage)];
    if (sr.memory.total_bytes() > worst)
      worst = sr.memory.total_bytes(), e.worst_memory_stage = sr.stage;
  }
  e.fits = worst <= e.memory_capacity_bytes;
}

}  // namespace

// Layouts without userbuffers reduce-scatters (TP 1, no sequence parallelism, overlap off: a
// search passes through them) run them in bf16; a BF16 job has no FP8 to write into them.
void check_settings(const model::ParallelConfig& c) {
  if (c.tp_comm_fp8_reduce_scatter && c.dtype != cost::Dtype::kFp8)
    throw InputError(
        "--tp-comm-fp8-reduce-scatter: needs --dtype fp8 (the GEMMs write FP8 into the "
        "reduce-scatter's buffers)");
  if (c.tp_only_amax_reduction && c.dtype != cost::Dtype::kFp8)
    throw InputError(
        "--tp-only-amax-red: needs --dtype fp8 (it sets where FP8 amaxes are reduced)");
}

void check_stack_settings(const model::ParallelConfig& c, const cost::StackSpec& stack,
                          const cost::KernelsDb& db) {
  if (!c.tp_only_amax_reduction || stack.fp8.amax_reductions_per_pass > 0) return;
  std::string reducing;
  for (const auto& [name, s] : db.stacks)
    if (s.fp8.amax_reductions_per_pass > 0) reducing += (reducing.empty() ? "" : ", ") + name;
  throw InputError("--tp-only-amax-red: stack " + stack.name + " runs FP8 " + stack.fp8.name +
                   ", which reduces no amaxes across ranks; pick a stack that does (" +
                   (reducing.empty() ? std::string("none in this kernels_db") : reducing) + ")");
}

// The tensor-parallel overlap the layout runs.
const char* overlap_name(const model::ParallelConfig& c, const cost::StackSpec& stack) {
  if (model::runs_userbuffers(c, stack)) return "userbuffers";
  // Without them a userbuffers stack overlaps as Megatron's backward does.
  return stack.tp_overlap == cost::TpOverlap::kNone ? "none" : "backward";
}

void check_named_layout(const model::ParallelConfig& c, const cost::StackSpec& stack) {
  // Userbuffers pipeline the sequence-parallel all-gathers and reduce-scatters with their GEMMs:
  // Megatron-Core refuses tp_comm_overlap without sequence parallelism.
  if (c.tp_comm_overlap.value_or(false))
    LUMOS_EXPECT(c.tp > 1 && c.sequence_parallel,
                 "--tp-comm-overlap on: needs --tp > 1 and --sp (userbuffers pipeline the "
                 "sequence-parallel all-gathers and reduce-scatters with their GEMMs)");
  LUMOS_EXPECT(!c.tp_comm_fp8_reduce_scatter || model::runs_userbuffers(c, stack),
               "--tp-comm-fp8-reduce-scatter: this layout has no userbuffers reduce-scatter to "
               "write FP8 into; it needs --tp > 1, --sp and userbuffers (--tp-comm-overlap on, or "
               "a stack that runs them: stack " +
                   stack.name + " runs " + cost::to_string(stack.tp_overlap) + ")");
}

EstimateRun run_estimate(const EstimateRequest& req, const cost::KernelsDb& db) {
  EstimateRun run;
  Estimate& e = run.estimate;
  e.model = req.model;
  e.cfg = req.cfg;
  const cost::GpuSpec gpu = req.nvlink_gbps > 0
                                ? cost::with_nvlink_gbps(db.gpu(req.gpu), req.nvlink_gbps)
                                : db.gpu(req.gpu);
  cost::Topology topo =
      req.topology.empty() ? db.default_topology_for(gpu) : db.topology(req.topology);
  if (req.nic_gbps > 0) topo.nic_gbps = req.nic_gbps;
  LUMOS_EXPECT(req.gpus_per_node >= 0 && req.gpus_per_node <= 1024,
               "--gpus-per-node " + std::to_string(req.gpus_per_node) + ": expected 1 to 1024");
  if (req.gpus_per_node > 0) topo.gpus_per_node = req.gpus_per_node;
  e.cfg.gpus_per_node = topo.gpus_per_node;
  const cost::StackSpec& stack = db.stack(e.cfg.stack.empty() ? db.default_stack : e.cfg.stack);
  e.cfg.stack = stack.name;
  if (e.cfg.attention && stack.attention == cost::AttentionImpl::kUnfused)
    throw InputError(
        std::string("--attention ") + cost::to_string(*e.cfg.attention) + ": stack " + stack.name +
        " runs unfused attention (its own kernels); pick a stack with fused attention");
  check_settings(e.cfg);
  check_stack_settings(e.cfg, stack, db);
  e.stack_summary = strprintf(
      "%s attention%s, %s kernels, tensor-parallel overlap %s, gradient reduction %s in %s, "
      "optimizer %.0f B/param",
      cost::to_string(e.cfg.attention.value_or(stack.attention)),
      stack.dropout ? " with dropout" : "", stack.fused_kernels ? "fused" : "eager",
      overlap_name(e.cfg, stack),
      e.cfg.overlap_grad_reduce.value_or(stack.grad_reduce_overlap) ? "overlapped"
                                                                    : "after backward",
      e.cfg.grad_reduce_bytes(stack.grad_reduce_bytes) == 2 ? "16 bit" : "fp32",
      stack.optimizer_bytes_per_param);
  // What the layout makes the stack run that the line above does not say.
  if (model::projections_apart(stack, e.model))
    e.stack_summary += ", projections apart (wq, wk, wv; w1, w3)";
  if (e.cfg.recompute == model::Recompute::kSelective)
    e.stack_summary += std::string(", selective recompute ") + cost::to_string(stack.selective);
  if (e.cfg.cp > 1)  // unfused attention gathers the KV before its core, whatever the stack says
    e.stack_summary +=
        stack.attention == cost::AttentionImpl::kUnfused
            ? std::string(", context-parallel KV gathered before the attention")
            : std::string(", context-parallel KV by ") + cost::to_string(stack.cp_rotation);
  if (e.cfg.dtype == cost::Dtype::kFp8)
    e.stack_summary += ", FP8 " + stack.fp8.name +
                       " (cast fusion: " + cost::to_string(stack.fp8_cast_fusion) + ")" +
                       (e.cfg.tp_only_amax_reduction ? ", amaxes reduced over TP x CP only" : "");
  e.gpu = gpu.name;
  e.topology = topo.name;
  if (req.nic_gbps > 0) e.topology += strprintf(" with %.4g GB/s NICs", req.nic_gbps);
  if (req.gpus_per_node > 0) e.topology += strprintf(", %d GPUs per node", req.gpus_per_node);
  if (req.nvlink_gbps > 0) e.topology += strprintf(", %.4g GB/s NVLink", req.nvlink_gbps);
  e.layout = check_layout(e.model, e.cfg);
  if (const int64_t d = deferred_head_wgrad_count(e.cfg, e.layout.microbatches))
    e.stack_summary += strprintf(", output-layer weight gradients of %lld micro-batches deferred",
                                 static_cast<long long>(d));
  const auto peak = gpu.peak_tflops[static_cast<size_t>(e.cfg.dtype)];
  if (!peak)
    throw InputError("--dtype " + std::string(cost::to_string(e.cfg.dtype)) + ": the " + gpu.name +
                     " has no " + cost::to_string(e.cfg.dtype) + " tensor cores");
  e.peak_tflops = *peak;

  const auto t0 = std::chrono::steady_clock::now();
  StepCosts costs = price_step(e.model, e.cfg, e.layout, db, gpu, topo, req.options);
  if (req.adjust_costs) req.adjust_costs(costs);
  const bool folded = req.fold_microbatches && !req.check_nodes &&
                      folds_microbatches(e.cfg, e.layout.microbatches) &&
                      fold_estimate(req, costs, db, &run);
  if (!folded) measure_graph(req, costs, db, &run);
  e.build_ms = ms_since(t0) - e.replay_ms;
  derive(stack, gpu, db, &e);
  return run;
}

}  // namespace lumos::estimate
