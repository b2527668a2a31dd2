#include "whatif/gemm_pricing.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/error.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernel_classifier.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::whatif {

using replay::GemmPricing;

GemmPricing gemm_pricing(const graph::Graph& g, const trace::EventTable& t,
                         const cost::KernelsDb& db, const std::string& traced_gpu,
                         const std::vector<std::string>& variant_gpus,
                         const std::vector<double>& compute_speed) {
  return gemm_pricing(g, classify_traced({&t}, db), db, traced_gpu, variant_gpus, compute_speed);
}

namespace {

// Kernel classes (kernel_classes.json) whose time follows HBM bandwidth.
bool memory_bound_class(const std::string& c) {
  return c == "elementwise" || c == "norm" || c == "softmax" || c == "loss" || c == "optimizer" ||
         c == "embedding" || c == "reduce";
}

}  // namespace

GemmPricing gemm_pricing(const graph::Graph& g, const TracedKernels& tk, const cost::KernelsDb& db,
                         const std::string& traced_gpu,
                         const std::vector<std::string>& variant_gpus,
                         const std::vector<double>& compute_speed) {
  LUMOS_EXPECT(compute_speed.empty() || compute_speed.size() == variant_gpus.size(),
               "gemm pricing: one compute speed-up per variant");
  GemmPricing p;
  // Columns: index 0 is the traced GPU, then each distinct (GPU, compute speed-up) of a variant.
  std::vector<const cost::GpuSpec*> gpus{&db.gpu(traced_gpu)};
  p.gpu_speed = {1.0};
  std::map<std::pair<std::string, double>, uint16_t> gpu_index{{{gpus[0]->name, 1.0}, 0}};
  for (size_t v = 0; v < variant_gpus.size(); ++v) {
    const cost::GpuSpec& s = db.gpu(variant_gpus[v]);
    const double speed = compute_speed.empty() ? 1.0 : compute_speed[v];
    LUMOS_EXPECT(gpus.size() < 65535, "gemm pricing: at most 65535 GPU columns");
    auto [it, fresh] =
        gpu_index.emplace(std::pair{s.name, speed}, static_cast<uint16_t>(gpus.size()));
    if (fresh) gpus.push_back(&s), p.gpu_speed.push_back(speed);
    p.variant_gpu.push_back(it->second);
  }
  // Parameters per (GPU, dtype). A dtype a variant's GPU lacks (fp8 on an A100) runs there as
  // bf16, as frameworks fall back; one the traced GPU lacks is unusable (never traced).
  p.params.resize(gpus.size() * cost::kNumDtypes);
  std::vector<bool> usable(gpus.size() * cost::kNumDtypes, false);
  const auto bf16_dtype = cost::Dtype::kBf16;
  for (size_t gi = 0; gi < gpus.size(); ++gi)
    for (int d = 0; d < cost::kNumDtypes; ++d) {
      const bool has = gpus[gi]->peak_tflops[d].has_value();
      if (!has && gi == 0) continue;
      p.params[gi * cost::kNumDtypes + d] =
          cost::gemm_core_params(db, *gpus[gi], has ? static_cast<cost::Dtype>(d) : bf16_dtype);
      usable[gi * cost::kNumDtypes + d] = true;
    }
  // FP8 forward GEMMs (both operands E4M3) ran with fast accumulation, as Transformer Engine's
  // and torchao's recipes run them; each GPU column's architecture sets what that gains.
  std::vector<double> fast_speedup;
  for (const cost::GpuSpec* s : gpus) fast_speedup.push_back(cost::fp8_fast_accum_speedup(db, *s));
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int, bool>, int32_t> key_of;
  std::vector<uint8_t> fast_key;  // per key
  p.node_key.assign(g.num_nodes(), -1);
  // Two ratio keys: attention runs at the GPU's matrix rate (its 16-bit peak at the clock its
  // power cap allows), memory-bound kernels at its HBM bandwidth; other kernels keep their
  // class's factor (the peak ratio).
  const int bf16 = static_cast<int>(cost::Dtype::kBf16);
  auto matrix_rate = [&](const cost::GpuSpec& s) {
    return *s.peak_tflops[bf16] * s.matrix_clock_fraction;
  };
  int32_t matrix_key = -1, hbm_key = -1;
  auto ratio_key = [&](int32_t& key) {
    if (key < 0) {
      key = static_cast<int32_t>(p.dtype.size());
      p.shape.insert(p.shape.end(), {0, 0, 0, 0});
      p.dtype.push_back(replay::kRatioKey);
      p.traced_us.push_back(1.0);
      fast_key.push_back(0);
    }
    return key;
  };
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel || g.cls[v] != graph::NodeClass::kCompute) continue;
    size_t table = 0;
    const trace::ClassifiedKernel* k = tk.kernel_of(g, v, &table);
    if (!k) continue;
    if (!k->gemm) {
      // Attention, and GEMMs and convolutions whose shape the trace does not give, at the
      // matrix rate.
      if (k->kernel_class == "attention_fwd" || k->kernel_class == "attention_bwd" ||
          k->kernel_class == "gemm" || k->kernel_class == "conv")
        p.node_key[v] = ratio_key(matrix_key);
      else if (memory_bound_class(k->kernel_class))
        p.node_key[v] = ratio_key(hbm_key);
      continue;
    }
    const cost::GemmQuery& q = *k->gemm;
    const int d = static_cast<int>(q.dtype);
    bool all = true;
    for (size_t gi = 0; gi < gpus.size(); ++gi) all = all && usable[gi * cost::kNumDtypes + d];
    if (!all) {
      p.node_key[v] = ratio_key(matrix_key);
      continue;
    }
    const bool fast = q.dtype == cost::Dtype::kFp8 && q.fprop;
    const auto tup = std::make_tuple(q.m, q.n, q.k, q.batch, d, fast);
    auto kit = key_of.find(tup);
    if (kit == key_of.end()) {
      const int32_t key = static_cast<int32_t>(p.dtype.size());
      p.shape.insert(p.shape.end(), {q.m, q.n, q.k, q.batch});
      p.dtype.push_back(static_cast<uint8_t>(d));
      const cost::GemmCoreResult r = cost::gemm_core_time(p.params[d], q.m, q.n, q.k, q.batch);
      p.traced_us.push_back(fast && r.method != cost::kMemoryBound ? r.time_us / fast_speedup[0]
                                                                   : r.time_us);
      fast_key.push_back(fast ? 1 : 0);
      kit = key_of.emplace(tup, key).first;
    }
    p.node_key[v] = kit->second;
  }
  if (std::find(fast_key.begin(), fast_key.end(), 1) != fast_key.end()) {
    p.fast_accum = std::move(fast_key);
    p.fast_accum_speedup = std::move(fast_speedup);
  }
  if (matrix_key >= 0 || hbm_key >= 0) {
    const size_t n = gpus.size();
    p.ratio.assign(p.dtype.size() * n, 1.0);
    for (size_t gi = 0; gi < n; ++gi) {
      if (matrix_key >= 0)
        p.ratio[static_cast<size_t>(matrix_key) * n + gi] =
            matrix_rate(*gpus[0]) / matrix_rate(*gpus[gi]);
      if (hbm_key >= 0)
        p.ratio[static_cast<size_t>(hbm_key) * n + gi] = gpus[0]->hbm_gbps / gpus[gi]->hbm_gbps;
    }
  }
  return p;
}

}  // namespace lumos::whatif
