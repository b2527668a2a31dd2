#include "report/cost_report.hpp"

#include <cstdio>
#include <string>

#include "common/format.hpp"
#include "common/json_writer.hpp"

namespace lumos::report {

using namespace lumos::cost;
using trace::ClassTime;
using trace::ModelError;
using trace::PricedKernel;
using trace::TraceClassification;

void gemm_text(std::ostream& os, const GpuSpec& gpu, const GemmQuery& q, const GemmEstimate& e) {
  os << strprintf("gemm %lldx%lldx%lld x%lld %s on %s: %.2f us, %.1f TFLOP/s (%s)\n",
                  (long long)q.m, (long long)q.n, (long long)q.k, (long long)q.batch,
                  to_string(q.dtype), gpu.name.c_str(), e.time_us, e.tflops, e.method.c_str());
}

void gemm_json(std::ostream& os, const GpuSpec& gpu, const GemmQuery& q, const GemmEstimate& e) {
  common::JsonWriter w(os);
  w.begin_object()
      .field("gpu", gpu.name)
      .field("dtype", to_string(q.dtype))
      .field("m", q.m)
      .field("n", q.n)
      .field("k", q.k);
  w.field("batch", q.batch)
      .field("time_us", e.time_us)
      .field("tflops", e.tflops)
      .field("method", e.method)
      .end_object();
  os << '\n';
}

void attention_text(std::ostream& os, const GpuSpec& gpu, const AttentionQuery& q,
                    const AttentionEstimate& e) {
  os << strprintf("attention %s b=%lld h=%lld s=%lld d=%lld%s on %s: %.2f us, %.1f TFLOP/s (%s)\n",
                  q.backward ? "bwd" : "fwd", (long long)q.batch, (long long)q.heads,
                  (long long)q.seq, (long long)q.head_dim, q.causal ? " causal" : "",
                  gpu.name.c_str(), e.time_us, e.tflops, e.table.c_str());
}

void attention_json(std::ostream& os, const GpuSpec& gpu, const AttentionQuery& q,
                    const AttentionEstimate& e) {
  common::JsonWriter w(os);
  w.begin_object()
      .field("gpu", gpu.name)
      .field("pass", q.backward ? "bwd" : "fwd")
      .field("causal", q.causal)
      .field("time_us", e.time_us);
  w.field("tflops", e.tflops).field("flops", e.flops).field("table", e.table).end_object();
  os << '\n';
}

void collective_text(std::ostream& os, const GpuSpec& gpu, const Topology& topo,
                     const CollectiveQuery& q, const CollectiveEstimate& e) {
  os << strprintf(
      "%s %.0f B over %d ranks (%d per node) on %s [%s]: %.2f us, algbw %.1f GB/s, busbw %.1f "
      "GB/s (%s/%s)\n",
      to_string(q.op), q.bytes, q.ranks, q.ranks_per_node, gpu.name.c_str(), topo.name.c_str(),
      e.time_us, e.algbw_gbps, e.busbw_gbps, to_string(e.algo), to_string(e.proto));
}

void collective_json(std::ostream& os, const GpuSpec& gpu, const Topology& topo,
                     const CollectiveQuery& q, const CollectiveEstimate& e) {
  // Version 2: the bandwidths, gigabytes per second as nccl-tests reports them, were named
  // algbw_gbps and busbw_gbps, the suffix of gigabits (docs/reference/outputs.md, "Units").
  // The writer's own schema_version is every other document's: this one writes its own.
  common::JsonWriter w(os, common::JsonWriter::Document::plain);
  w.begin_object()
      .field("schema_version", kCollectiveSchemaVersion)
      .field("gpu", gpu.name)
      .field("topology", topo.name)
      .field("op", to_string(q.op))
      .field("bytes", q.bytes);
  w.field("ranks", q.ranks).field("ranks_per_node", q.ranks_per_node).field("time_us", e.time_us);
  w.field("latency_us", e.latency_us)
      .field("algbw_gb_per_s", e.algbw_gbps)
      .field("busbw_gb_per_s", e.busbw_gbps);
  w.field("algorithm", to_string(e.algo)).field("protocol", to_string(e.proto)).end_object();
  os << '\n';
}

void kernel_time_text(std::ostream& os, const GpuSpec& gpu, const std::string& kind,
                      double time_us) {
  os << strprintf("%s on %s: %.2f us\n", kind.c_str(), gpu.name.c_str(), time_us);
}

void kernel_time_json(std::ostream& os, const GpuSpec& gpu, const std::string& kind,
                      double time_us) {
  common::JsonWriter w(os);
  w.begin_object()
      .field("gpu", gpu.name)
      .field("kind", kind)
      .field("time_us", time_us)
      .end_object();
  os << '\n';
}

void classification_text(std::ostream& os, const TraceClassification& c, bool verbose) {
  os << strprintf("%s: %.1f us of GPU time, %.2f%% classified (GPU: %s)\n", c.trace.c_str(),
                  c.gpu_time_us, 100 * c.classified_fraction,
                  c.gpu.empty() ? "not in kernels_db, no predictions" : c.gpu.c_str());
  for (const ClassTime& k : c.classes)
    os << strprintf("  %-14s %14.1f us %6.2f%%\n", k.kernel_class.c_str(), k.time_us,
                    k.percent_of_gpu_time);
  for (const ModelError& m : c.errors)
    os << strprintf("  model vs measured, %s: %zu kernels, median |error| %.1f%%\n",
                    m.kernel_class.c_str(), m.kernels, 100 * m.median_abs_error);
  if (!verbose) return;
  for (const PricedKernel& k : c.kernels) {
    if (k.gemm)
      os << strprintf("  gemm %lldx%lldx%lld x%lld %s: model %.1f us, measured %.1f us  %.60s\n",
                      (long long)k.gemm->m, (long long)k.gemm->n, (long long)k.gemm->k,
                      (long long)k.gemm->batch, to_string(k.gemm->dtype), k.model_us, k.measured_us,
                      k.name.c_str());
    if (k.collective)
      os << strprintf("  %s %.0f B x%d: model %.1f us, measured %.1f us\n",
                      to_string(k.collective->op), k.collective->bytes, k.collective->ranks,
                      k.model_us, k.measured_us);
  }
}

void classification_json(std::ostream& os, const TraceClassification& c) {
  common::JsonWriter w(os);
  w.begin_object().field("trace", c.trace).field("gpu", c.gpu).field("gpu_time_us", c.gpu_time_us);
  w.field("classified_fraction", c.classified_fraction);
  w.key("time_by_class_us").begin_object();
  for (const ClassTime& k : c.classes) w.field(k.kernel_class, k.time_us);
  w.end_object();
  w.key("model_vs_measured").begin_object();
  for (const ModelError& m : c.errors)
    w.key(m.kernel_class)
        .begin_object()
        .field("kernels", static_cast<uint64_t>(m.kernels))
        .field("median_abs_error", m.median_abs_error)
        .end_object();
  w.end_object().end_object();
  os << '\n';
}

void gpus_text(std::ostream& os, const KernelsDb& db) {
  os << strprintf("%-6s %-9s %5s %9s %9s %9s %8s %6s %8s %6s\n", "gpu", "arch", "SMs", "bf16 TF",
                  "fp8 TF", "HBM GB/s", "HBM GiB", "L2 MiB", "NVL GB/s", "TDP W");
  for (const GpuSpec& g : db.gpus) {
    const auto& f8 = g.peak_tflops[static_cast<int>(Dtype::kFp8)];
    os << strprintf("%-6s %-9s %5d %9.1f %9s %9.0f %8.0f %6s %8.0f %6.0f\n", g.name.c_str(),
                    to_string(g.arch), g.sms, *g.peak_tflops[static_cast<int>(Dtype::kBf16)],
                    f8 ? std::to_string(static_cast<int>(*f8)).c_str() : "-", g.hbm_gbps, g.hbm_gib,
                    g.l2_mib ? std::to_string(static_cast<int>(*g.l2_mib)).c_str() : "-",
                    g.nvlink_gbps, g.tdp_w);
  }
  for (const GpuSpec& g : db.gpus)
    if (!g.full_clock_part.empty())
      os << strprintf(
          "%s: peaks at full clock; capped at %.0f W, its matrix kernels run at %.2f of "
          "%s's clock\n",
          g.name.c_str(), g.tdp_w, g.matrix_clock_fraction, g.full_clock_part.c_str());
}

}  // namespace lumos::report
