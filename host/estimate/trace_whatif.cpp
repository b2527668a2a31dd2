#include "estimate/trace_whatif.hpp"

#include "carbon/energy.hpp"
#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "replay/pareto.hpp"
#include "whatif/gemm_pricing.hpp"

namespace lumos::estimate {
namespace {

std::string traced_gpu_of(const graph::LoadedInput& in, const std::string& given,
                          const cost::KernelsDb& db) {
  if (!given.empty()) return given;
  if (in.table && !in.table->gpu_name.empty()) {
    try {
      return db.gpu(in.table->gpu_name).name;
    } catch (const InputError&) {
      throw InputError("lumos whatif: the trace ran on '" + in.table->gpu_name +
                       "', which kernels_db does not describe; pass --traced-gpu");
    }
  }
  return "h100";
}

}  // namespace

WhatifAnswer run_whatif(const graph::LoadedInput& in, const WhatifRequest& req,
                        const cost::KernelsDb& db) {
  WhatifAnswer a;
  a.traced_gpu = traced_gpu_of(in, req.traced_gpu, db);
  const std::vector<std::string> gpus =
      req.gpus.empty() ? std::vector<std::string>{a.traced_gpu} : req.gpus;
  const std::vector<whatif::SpeedAxis> axes =
      req.speed.empty() ? std::vector<whatif::SpeedAxis>{}
                        : whatif::parse_speed_axes(req.speed, "lumos whatif: --speed");
  a.grid = whatif::build_grid(db, a.traced_gpu, gpus, axes, in.graph.num_nodes());
  // GEMMs with known shapes are priced per GPU by the cost model (the trace gives the shapes).
  replay::GemmPricing pricing;
  if (in.table)
    pricing = whatif::gemm_pricing(in.graph, *in.table, db, a.traced_gpu, a.grid.variant_gpu);
  a.gemm_kernels_priced = pricing.priced_nodes();
  a.result = engine::batch_replay(in.graph, a.grid.batch, req.backend,
                                  a.gemm_kernels_priced > 0 ? &pricing : nullptr);
  std::vector<const cost::GpuSpec*> spec;
  for (const std::string& name : a.grid.variant_gpu) spec.push_back(&db.gpu(name));
  a.energy_j = carbon::gpu_step_energy_j(a.result, spec);
  a.on_front.assign(a.grid.batch.count, false);
  for (uint32_t v : replay::pareto_front({a.result.makespan_us, a.energy_j})) a.on_front[v] = true;
  return a;
}

}  // namespace lumos::estimate
