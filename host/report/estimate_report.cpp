#include "report/estimate_report.hpp"

#include <cstdio>
#include <optional>

#include "common/engineering.hpp"
#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/breakdown_report.hpp"

namespace lumos::report {

using namespace lumos::estimate;
using model::to_string;

namespace {

const char* schedule_name(const ParallelConfig& c) {
  return c.pp == 1 ? "no pipeline" : c.interleave > 1 ? "interleaved 1F1B" : "1F1B";
}

double gib(double b) {
  return b / (1024.0 * 1024.0 * 1024.0);
}

}  // namespace

void estimate_text(std::ostream& os, const Estimate& e) {
  const ParallelConfig& c = e.cfg;
  os << strprintf("lumos estimate: %s on %lld x %s (%s)\n", e.model.name.c_str(),
                  static_cast<long long>(c.gpus()), e.gpu.c_str(), e.topology.c_str());
  os << strprintf(
      "  model     %lld layers, hidden %lld, ffn %lld, %lld heads (%lld KV) x %lld, vocab "
      "%lld (padded %lld), seq %lld, %s\n",
      static_cast<long long>(e.model.layers), static_cast<long long>(e.model.hidden),
      static_cast<long long>(e.model.ffn), static_cast<long long>(e.model.heads),
      static_cast<long long>(e.model.kv_heads), static_cast<long long>(e.model.head_dim),
      static_cast<long long>(e.model.vocab), static_cast<long long>(e.layout.padded_vocab),
      static_cast<long long>(e.model.seq), to_string(e.model.act));
  os << strprintf(
      "  layout    TP %d x CP %d x PP %d x DP %d, mbs %lld, gbs %lld (%lld micro-batch%s), "
      "%s%s, recompute %s%s%s, %s\n",
      c.tp, c.cp, c.pp, c.dp, static_cast<long long>(c.mbs), static_cast<long long>(c.gbs),
      static_cast<long long>(e.layout.microbatches), e.layout.microbatches == 1 ? "" : "es",
      schedule_name(c), c.interleave > 1 ? (" x" + std::to_string(c.interleave)).c_str() : "",
      to_string(c.recompute), c.sequence_parallel ? ", sequence parallel" : "",
      c.fsdp ? ", FSDP" : (c.distributed_optimizer ? ", distributed optimizer" : ""),
      cost::to_string(c.dtype));
  os << strprintf("  stack     %s: %s\n", c.stack.c_str(), e.stack_summary.c_str());
  if (e.step_range.known)
    os << strprintf("  step time          %.4f s  (%.4f-%.4f s from %s)\n", e.step_time_us * 1e-6,
                    e.step_range.low_us * 1e-6, e.step_range.high_us * 1e-6,
                    e.step_range.basis.c_str());
  else
    os << strprintf("  step time          %.4f s  (no range: %s)\n", e.step_time_us * 1e-6,
                    e.step_range.basis.c_str());
  const double per_gpu = e.tokens_per_s / static_cast<double>(c.gpus());
  os << "  throughput         " << engineering(e.tokens_per_s, "tokens/s") << "  ("
     << engineering(per_gpu, "tokens/s") << " per GPU)\n";
  os << strprintf(
      "  model TFLOP/s/GPU  %.1f   MFU %.1f%%   HFU %.1f%%  (of %.0f TFLOP/s %s peak)\n",
      e.model_tflops_per_gpu, 100 * e.mfu, 100 * e.hfu, e.peak_tflops, cost::to_string(c.dtype));
  const auto& b = e.breakdown;
  const double w = e.step_time_us / 100;
  os << strprintf(
      "  breakdown          exposed compute %.1f%%, overlapped %.1f%%, exposed comm %.1f%%, "
      "bubble %.1f%%, other %.1f%%  (mean over stages)\n",
      b.exposed_compute_us / w, b.overlapped_us / w, b.exposed_comm_us / w, b.bubble_us / w,
      b.other_us / w);
  os << strprintf("  kernel time       ");
  for (size_t i = 0; i < e.kernel_time_us.size() && i < 6; ++i)
    os << strprintf("%s %s %.1f%%", i ? "," : "", e.kernel_time_us[i].first.c_str(),
                    e.kernel_time_us[i].second / w);
  os << strprintf("  (of the step, mean over stages)\n");
  const StageMemory& m = e.stages[static_cast<size_t>(e.worst_memory_stage)].memory;
  os << strprintf(
      "  memory per GPU     %.1f GiB of %.0f GiB (stage %d): weights %.1f, gradients %.1f, "
      "optimizer %.1f, activations %.1f GiB -> %s\n",
      gib(m.total_bytes()), gib(e.memory_capacity_bytes), e.worst_memory_stage,
      gib(m.weights_bytes), gib(m.grads_bytes), gib(m.optimizer_bytes), gib(m.activations_bytes),
      !e.fits ? "DOES NOT FIT"
      : m.total_bytes() > 0.9 * e.memory_capacity_bytes
          ? "fits, tight (over 90%; the CUDA context, NCCL buffers and fragmentation need some)"
          : "fits");
  if (c.pp > 1) {
    os << strprintf("  stage  rank     end (s)  compute%%  comm%%  bubble%%  memory GiB\n");
    for (const auto& s : e.stages) {
      const auto& sb = s.breakdown;
      os << strprintf("  %5d  %5d  %10.4f  %8.1f  %5.1f  %7.1f  %10.1f\n", s.stage, s.rank,
                      s.end_us * 1e-6, (sb.exposed_compute_us + sb.overlapped_us) / w,
                      sb.exposed_comm_us / w, sb.bubble_us / w, gib(s.memory.total_bytes()));
    }
  }
  os << strprintf(
      "  graph              %llu nodes, %llu edges; built in %.0f ms, replayed in %.0f ms\n",
      static_cast<unsigned long long>(e.nodes), static_cast<unsigned long long>(e.edges),
      e.build_ms, e.replay_ms);
}

void estimate_fields(common::JsonWriter& w, const Estimate& e) {
  const ParallelConfig& c = e.cfg;
  w.key("model").begin_object();
  w.field("name", e.model.name).field("layers", e.model.layers).field("hidden", e.model.hidden);
  w.field("ffn", e.model.ffn).field("heads", e.model.heads).field("kv_heads", e.model.kv_heads);
  w.field("head_dim", e.model.head_dim).field("vocab", e.model.vocab);
  w.field("padded_vocab", e.layout.padded_vocab).field("seq", e.model.seq);
  w.field("act", to_string(e.model.act)).end_object();
  w.key("layout").begin_object();
  w.field("gpu", e.gpu).field("topology", e.topology).field("gpus", c.gpus());
  w.field("tp", c.tp).field("cp", c.cp).field("pp", c.pp).field("dp", c.dp);
  w.field("mbs", c.mbs).field("gbs", c.gbs).field("microbatches", e.layout.microbatches);
  w.field("interleave", c.interleave).field("schedule", schedule_name(c));
  w.field("recompute", to_string(c.recompute)).field("sequence_parallel", c.sequence_parallel);
  w.field("distributed_optimizer", c.distributed_optimizer).field("fsdp", c.fsdp);
  w.field("dtype", cost::to_string(c.dtype)).field("stack", c.stack);
  // The settings that change the estimate beyond the degrees: where an option left the stack's
  // choice, "stack".
  auto setting = [](const std::optional<bool>& v) { return v ? (*v ? "on" : "off") : "stack"; };
  w.field("split_embedding", c.split_counts_embedding);
  w.field("overlap_grad_reduce", setting(c.overlap_grad_reduce));
  w.field("tp_comm_overlap", setting(c.tp_comm_overlap));
  w.field("tp_comm_fp8_reduce_scatter", c.tp_comm_fp8_reduce_scatter);
  w.field("tp_only_amax_reduction", c.tp_only_amax_reduction);
  w.field("grad_reduce_in_fp32", setting(c.grad_reduce_in_fp32));
  w.field("param_remainders", c.param_remainders);
  w.field("deferred_embedding_wgrads", deferred_head_wgrad_count(c, e.layout.microbatches));
  w.field("attention", c.attention ? cost::to_string(*c.attention) : "stack").end_object();
  w.field("step_time_s", e.step_time_us * 1e-6);
  w.key("step_time_range").begin_object().field("known", e.step_range.known);
  if (e.step_range.known)
    w.field("low_s", e.step_range.low_us * 1e-6).field("high_s", e.step_range.high_us * 1e-6);
  w.field("basis", e.step_range.basis).key("runs").begin_array();
  for (const auto& r : e.step_range.runs) w.value(r);
  w.end_array().end_object();
  w.field("tokens_per_s", e.tokens_per_s);
  w.field("model_flops", e.model_flops).field("hardware_flops", e.hardware_flops);
  w.field("model_tflops_per_gpu", e.model_tflops_per_gpu);
  w.field("hw_tflops_per_gpu", e.hw_tflops_per_gpu);
  w.field("peak_tflops", e.peak_tflops).field("mfu", e.mfu).field("hfu", e.hfu);
  w.key("breakdown");
  breakdown_json(w, e.breakdown);
  w.key("kernel_time_us").begin_object();
  for (const auto& [cls, us] : e.kernel_time_us) w.field(cls, us);
  w.end_object();
  w.key("memory").begin_object();
  const StageMemory& m = e.stages[static_cast<size_t>(e.worst_memory_stage)].memory;
  w.field("stage", e.worst_memory_stage).field("weights_bytes", m.weights_bytes);
  w.field("grads_bytes", m.grads_bytes).field("optimizer_bytes", m.optimizer_bytes);
  w.field("activations_bytes", m.activations_bytes).field("total_bytes", m.total_bytes());
  w.field("capacity_bytes", e.memory_capacity_bytes).field("fits", e.fits);
  w.field("fraction_of_capacity", m.total_bytes() / e.memory_capacity_bytes).end_object();
  w.key("stages").begin_array();
  for (const auto& s : e.stages) {
    w.begin_object().field("stage", s.stage).field("rank", s.rank).field("end_s", s.end_us * 1e-6);
    w.key("breakdown");
    breakdown_json(w, s.breakdown);
    w.field("params", s.memory.params).field("memory_bytes", s.memory.total_bytes());
    w.field("inflight_microbatches", s.memory.inflight_microbatches).end_object();
  }
  w.end_array();
  w.key("graph").begin_object().field("nodes", e.nodes).field("edges", e.edges);
  w.field("build_ms", e.build_ms).field("replay_ms", e.replay_ms).end_object();
}

void estimate_json(std::ostream& os, const Estimate& e, const std::vector<std::string>& files) {
  common::JsonWriter w(os);
  w.begin_object();
  estimate_fields(w, e);
  if (!files.empty()) {
    w.key("traces").begin_array();
    for (const auto& f : files) w.value(f);
    w.end_array();
  }
  w.end_object();
  os << '\n';
}

}  // namespace lumos::report
