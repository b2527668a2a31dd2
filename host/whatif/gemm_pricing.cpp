#include "whatif/gemm_pricing.hpp"

#include <map>
#include <tuple>

#include "cost/gemm_model.hpp"
#include "cost/kernel_classifier.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::whatif {

using replay::GemmPricing;

GemmPricing gemm_pricing(const graph::Graph& g, const trace::EventTable& t,
                         const cost::KernelsDb& db, const std::string& traced_gpu,
                         const std::vector<std::string>& variant_gpus) {
  return gemm_pricing(g, classify_traced({&t}, db), db, traced_gpu, variant_gpus);
}

GemmPricing gemm_pricing(const graph::Graph& g, const TracedKernels& tk, const cost::KernelsDb& db,
                         const std::string& traced_gpu,
                         const std::vector<std::string>& variant_gpus) {
  GemmPricing p;
  // GPUs: index 0 is the traced one, then each distinct variant GPU.
  std::vector<const cost::GpuSpec*> gpus{&db.gpu(traced_gpu)};
  std::map<std::string, uint16_t> gpu_index{{gpus[0]->name, 0}};
  for (const std::string& name : variant_gpus) {
    const cost::GpuSpec& s = db.gpu(name);
    auto [it, fresh] = gpu_index.emplace(s.name, static_cast<uint16_t>(gpus.size()));
    if (fresh) gpus.push_back(&s);
    p.variant_gpu.push_back(it->second);
  }
  // Parameters per (GPU, dtype); a dtype a GPU lacks is marked unusable.
  p.params.resize(gpus.size() * cost::kNumDtypes);
  std::vector<bool> usable(gpus.size() * cost::kNumDtypes, false);
  for (size_t gi = 0; gi < gpus.size(); ++gi)
    for (int d = 0; d < cost::kNumDtypes; ++d) {
      if (!gpus[gi]->peak_tflops[d].has_value()) continue;
      p.params[gi * cost::kNumDtypes + d] =
          cost::gemm_core_params(db, *gpus[gi], static_cast<cost::Dtype>(d));
      usable[gi * cost::kNumDtypes + d] = true;
    }
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int>, int32_t> key_of;
  p.node_key.assign(g.num_nodes(), -1);
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel) continue;
    size_t table = 0;
    const cost::ClassifiedKernel* k = tk.kernel_of(g, v, &table);
    if (!k || !k->gemm) continue;
    const cost::GemmQuery& q = *k->gemm;
    const int d = static_cast<int>(q.dtype);
    bool all = true;
    for (size_t gi = 0; gi < gpus.size(); ++gi) all = all && usable[gi * cost::kNumDtypes + d];
    if (!all) continue;
    const auto tup = std::make_tuple(q.m, q.n, q.k, q.batch, d);
    auto kit = key_of.find(tup);
    if (kit == key_of.end()) {
      const int32_t key = static_cast<int32_t>(p.dtype.size());
      p.shape.insert(p.shape.end(), {q.m, q.n, q.k, q.batch});
      p.dtype.push_back(static_cast<uint8_t>(d));
      p.traced_us.push_back(cost::gemm_core_time(p.params[d], q.m, q.n, q.k, q.batch).time_us);
      kit = key_of.emplace(tup, key).first;
    }
    p.node_key[v] = kit->second;
  }
  return p;
}

}  // namespace lumos::whatif
