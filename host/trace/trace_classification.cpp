#include "trace/trace_classification.hpp"

#include "common/error.hpp"
#include "common/stats.hpp"
#include "cost/kernel_classifier.hpp"

namespace lumos::trace {

using cost::GpuSpec;
using cost::KernelsDb;
using cost::Topology;

TraceClassification classify_trace(const KernelsDb& db, const trace::EventTable& t) {
  const TraceCostReport r = cost_report(db, t);
  TraceClassification c;
  c.trace = t.path;
  c.gpu = r.gpu;
  c.gpu_time_us = r.gpu_time_us;
  c.classified_fraction = r.classified_fraction;
  for (const auto& [k, v] : r.time_by_class_us)
    c.classes.push_back({k, v, 100 * v / r.gpu_time_us});
  for (const auto& [k, v] : r.rel_errors) c.errors.push_back({k, v.size(), median(v)});
  if (r.gpu.empty()) return c;
  const GpuSpec& gpu = db.gpu(r.gpu);
  const Topology& topo = db.default_topology_for(gpu);
  for (const ClassifiedKernel& k : r.kernels) {
    const auto& e = t.events[k.event];
    const double measured = static_cast<double>(e.dur_ns) / 1000.0;
    if (k.gemm) {
      try {
        const double model = gemm_time(db, gpu, *k.gemm).time_us;
        c.kernels.push_back({k.gemm, std::nullopt, model, measured, std::string(t.name_of(e))});
      } catch (const InputError&) {
      }
    }
    if (k.collective)
      c.kernels.push_back({std::nullopt, k.collective,
                           collective_time(db, gpu, topo, *k.collective).time_us, measured, ""});
  }
  return c;
}

}  // namespace lumos::trace
