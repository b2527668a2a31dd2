#include "cost/attention_model.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/error.hpp"

namespace lumos::cost {

AttentionEstimate attention_time(const KernelsDb& db, const GpuSpec& gpu, const AttentionQuery& q) {
  // 2^24, the model's own limit on every size (model_spec.cpp): FLOPs stay far inside a double.
  constexpr int64_t kMax = int64_t{1} << 24;
  LUMOS_EXPECT(q.batch > 0 && q.heads > 0 && q.seq > 0 && q.head_dim > 0 && q.batch <= kMax &&
                   q.heads <= kMax && q.seq <= kMax && q.head_dim <= kMax,
               "attention: batch, heads, seq and head dim must be in 1..2^24 (got " +
                   std::to_string(q.batch) + ", " + std::to_string(q.heads) + ", " +
                   std::to_string(q.seq) + ", " + std::to_string(q.head_dim) + ")");
  // The FlashAttention tables are 16-bit (and fp8); an fp32 or tf32 attention runs on other
  // kernels at other rates, which nothing here models.
  LUMOS_EXPECT(q.dtype == Dtype::kBf16 || q.dtype == Dtype::kFp16 || q.dtype == Dtype::kFp8,
               std::string("attention: dtype ") + to_string(q.dtype) +
                   " is not modelled (expected bf16, fp16 or fp8)");
  LUMOS_EXPECT(q.impl != AttentionImpl::kUnfused,
               "attention: the unfused path is priced kernel by kernel, not from the tables");
  const bool fp8 = q.dtype == Dtype::kFp8;
  const char* impl = gpu.arch == Arch::kAmpere || q.impl == AttentionImpl::kFlash2 ? "fa2"
                     : q.impl == AttentionImpl::kCudnn                             ? "cudnn"
                                                                                   : "fa3";
  // Pick the table: same implementation and pass; fp8 tables only for fp8; then this GPU's own
  // tables, then another GPU of its architecture (scaled by peak: a100-40gb from a100), then the
  // reference GPU's; then causal match, then nearest head dim.
  const AttentionTable* best = nullptr;
  double best_score = std::numeric_limits<double>::infinity();
  for (const AttentionTable& t : db.attention.tables) {
    if (t.backward != q.backward || t.impl != impl) continue;
    if ((t.dtype == Dtype::kFp8) != fp8) continue;
    const bool same_arch = t.gpu_arch == gpu.arch;
    if (t.gpu != gpu.name && !same_arch && t.gpu != db.attention.reference_gpu) continue;
    const double score = (t.gpu == gpu.name ? 0.0
                          : same_arch       ? 5000.0
                                            : 10000.0) +
                         (t.causal != q.causal ? 1000.0 : 0.0) +
                         std::abs(std::log2(double(t.head_dim) / q.head_dim));
    if (score < best_score) {
      best_score = score;
      best = &t;
    }
  }
  if (!best && fp8) {  // no fp8 table for this pass: the bf16 one at the fp8/bf16 peak ratio
    AttentionQuery b = q;
    b.dtype = Dtype::kBf16;
    AttentionEstimate e = attention_time(db, gpu, b);
    const auto& p8 = gpu.peak_tflops[static_cast<int>(Dtype::kFp8)];
    LUMOS_EXPECT(p8.has_value(), "attention: " + gpu.name + " has no fp8");
    e.tflops *= *p8 / *gpu.peak_tflops[static_cast<int>(Dtype::kBf16)];
    e.time_us = e.flops / (e.tflops * 1e6);
    e.table += " scaled to fp8";
    return e;
  }
  LUMOS_EXPECT(best != nullptr, std::string("kernels_db/attention.json: no ") + impl +
                                    " table for this pass on " + gpu.name + " or " +
                                    db.attention.reference_gpu);
  // Throughput at this sequence length: linear in log2(seq) between points, flat outside.
  const double x = std::log2(static_cast<double>(q.seq));
  double tf = best->tflops.front();
  if (x >= std::log2(best->seq.back())) {
    tf = best->tflops.back();
  } else {
    for (size_t i = 0; i + 1 < best->seq.size(); ++i) {
      const double x0 = std::log2(best->seq[i]), x1 = std::log2(best->seq[i + 1]);
      if (x >= x0 && x <= x1) {
        tf = best->tflops[i] + (best->tflops[i + 1] - best->tflops[i]) * (x - x0) / (x1 - x0);
        break;
      }
    }
  }
  // Another GPU's table: scaled by the dense peak ratio.
  if (best->gpu != gpu.name) {
    const GpuSpec& ref = db.gpu(best->gpu);
    const Dtype peak_dtype = fp8 ? Dtype::kFp8 : Dtype::kBf16;
    const auto& gp = gpu.peak_tflops[static_cast<int>(peak_dtype)];
    LUMOS_EXPECT(gp.has_value(), "attention: " + gpu.name + " has no " + to_string(peak_dtype));
    tf *= *gp / *ref.peak_tflops[static_cast<int>(peak_dtype)];
  }
  // A power-capped part runs attention's matrix arithmetic at a lower clock than the table's
  // GPU (a table measured on the part itself already shows it).
  if (best->gpu != gpu.name) tf *= gpu.matrix_clock_fraction;
  AttentionEstimate e;
  double fwd = 4.0 * q.batch * static_cast<double>(q.seq) * q.seq * q.heads * q.head_dim;
  if (q.causal) fwd *= 0.5;
  e.flops = q.backward ? fwd * db.attention.backward_flop_factor : fwd;
  e.tflops = tf;
  e.time_us = e.flops / (tf * 1e6);
  e.table = best->impl + " " + best->gpu + " " + std::string(best->backward ? "bwd" : "fwd") +
            (best->causal ? " causal" : " non-causal") + " d=" + std::to_string(best->head_dim) +
            " (" + best->source + ")";
  return e;
}

}  // namespace lumos::cost
