#include "estimate/trace_whatif.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "carbon/trace_energy.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/kernels_db.hpp"
#include "replay/pareto.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "whatif/gemm_pricing.hpp"

namespace lumos::estimate {

std::string traced_gpu_of(const graph::LoadedInput& in, const std::string& given,
                          const cost::KernelsDb& db) {
  if (!given.empty()) return given;
  const auto tables = in.tables();
  if (!tables.empty() && !tables[0]->gpu_name.empty()) {
    try {
      return db.gpu(tables[0]->gpu_name).name;
    } catch (const InputError&) {
      throw InputError(in.label + ": the trace ran on '" + tables[0]->gpu_name +
                       "', which kernels_db does not describe; pass --traced-gpu");
    }
  }
  return "h100";
}

namespace {

// The network the job is priced on after the edit: a kernels_db topology, with another NIC
// line rate when asked.
cost::Topology target_topology(const cost::KernelsDb& db, const WhatifRequest& req,
                               const cost::Topology& traced) {
  cost::Topology t = req.topology.empty() ? traced : db.topology(req.topology);
  if (req.nic_gbps > 0) {
    t.nic_gbps = req.nic_gbps;
    t.name += strprintf(" with %.4g GB/s NICs", req.nic_gbps);
  }
  return t;
}

// A job's step from its steps' times: each rank's mean over its steps, the slowest rank's (a
// synchronous job waits for it).
double job_step_us(const std::vector<std::pair<int32_t, double>>& rank_step_us) {
  std::map<int32_t, std::pair<double, int>> by_rank;
  for (const auto& [rank, us] : rank_step_us) {
    auto& [sum, n] = by_rank[rank];
    sum += us, ++n;
  }
  double worst = 0;
  for (const auto& [rank, sn] : by_rank) worst = std::max(worst, sn.first / sn.second);
  return worst;
}

// The unedited input's step, replayed as traced.
double traced_step_us(const graph::Graph& g) {
  const replay::ReplayResult r = replay::reference_replay(g);
  if (g.steps.empty()) return r.makespan_us;
  std::vector<std::pair<int32_t, double>> steps;
  for (const replay::StepTime& st : replay::step_times(g, r))
    steps.emplace_back(st.rank, st.replayed_us);
  return job_step_us(steps);
}

}  // namespace

whatif::JobStructure describe_job(const graph::LoadedInput& in, const cost::KernelsDb& db,
                                  const whatif::JobHints& hints) {
  LUMOS_EXPECT(!in.tables().empty(),
               "lumos whatif: " + in.label + ": a .lgraph file has no trace to recognise a job in");
  return whatif::recognise_job(whatif::classify_traced(in.tables(), db), hints);
}

WhatifAnswer run_whatif(const graph::LoadedInput& in, const WhatifRequest& req,
                        const cost::KernelsDb& db) {
  WhatifAnswer a;
  a.traced_gpu = traced_gpu_of(in, req.traced_gpu, db);
  graph::Graph edited;
  // The traces' kernels, classified once: for the edits and for pricing GEMMs per GPU.
  const whatif::TracedKernels tk = whatif::classify_traced(in.tables(), db);
  if (req.edits()) {
    LUMOS_EXPECT(!in.tables().empty(), "lumos whatif: " + in.label +
                                           ": editing a job needs its traces, not a .lgraph file");
    LUMOS_EXPECT(req.dp >= 0 && req.dp <= 1'000'000,
                 "lumos whatif: --dp: expected a degree from 1 to 1000000");
    a.structure = whatif::recognise_job(tk, req.hints);
    const cost::GpuSpec& gpu = db.gpu(a.traced_gpu);
    const cost::Topology& traced_topo = req.traced_topology.empty()
                                            ? db.default_topology_for(gpu)
                                            : db.topology(req.traced_topology);
    const cost::Topology topo = target_topology(db, req, traced_topo);
    whatif::CollectiveEditRequest er;
    er.dp = req.dp;
    er.gpu = &gpu;
    er.traced_topology = &traced_topo;
    er.topology = req.topology.empty() && req.nic_gbps <= 0 ? &traced_topo : &topo;
    edited = whatif::edit_collectives(in.graph, tk, a.structure, er, db, &a.edits);
    a.unedited_us = traced_step_us(in.graph);
  }
  const graph::Graph& g = req.edits() ? edited : in.graph;
  const std::vector<std::string> gpus =
      req.gpus.empty() ? std::vector<std::string>{a.traced_gpu} : req.gpus;
  const std::vector<whatif::SpeedAxis> axes =
      req.speed.empty() ? std::vector<whatif::SpeedAxis>{}
                        : whatif::parse_speed_axes(req.speed, "lumos whatif: --speed");
  a.grid = whatif::build_grid(db, a.traced_gpu, gpus, axes, g.num_nodes());
  // GEMMs with known shapes are priced per GPU by the cost model (the trace gives the shapes).
  replay::GemmPricing pricing;
  if (!tk.tables.empty())
    pricing =
        whatif::gemm_pricing(g, tk, db, a.traced_gpu, a.grid.variant_gpu, a.grid.compute_speed);
  a.gemm_kernels_priced = pricing.priced_gemm_nodes();
  if (tk.tables.empty() && std::any_of(a.grid.variant_gpu.begin(), a.grid.variant_gpu.end(),
                                       [&](const std::string& n) { return n != a.traced_gpu; }))
    a.unpriced_warning = in.label +
                         " has no trace tables (a graph file): on another GPU its kernels scale "
                         "by class ratios only, without GEMM shapes, attention clocks or HBM";
  a.result = engine::batch_replay(g, a.grid.batch, req.backend,
                                  pricing.priced_nodes() > 0 ? &pricing : nullptr, true, nullptr, 0,
                                  req.progress);
  // Each variant's step, and one GPU's energy over it (carbon/trace_energy.hpp): the kernels
  // of every rank and step, per GPU-step.
  a.step_us = a.result.makespan_us;
  if (!g.steps.empty() && a.result.step_us.size() == g.steps.size())
    for (uint32_t v = 0; v < a.grid.batch.count; ++v) {
      std::vector<std::pair<int32_t, double>> steps;
      for (size_t k = 0; k < g.steps.size(); ++k)
        steps.emplace_back(g.steps[k].rank, a.result.step_us[k][v]);
      a.step_us[v] = job_step_us(steps);
    }
  a.cp_compute_us.resize(a.grid.batch.count), a.cp_comm_us.resize(a.grid.batch.count);
  for (uint32_t v = 0; v < a.grid.batch.count; ++v) {
    const double share = a.result.makespan_us[v] > 0 ? a.step_us[v] / a.result.makespan_us[v] : 1.0;
    a.cp_compute_us[v] = a.result.cp_compute_us[v] * share;
    a.cp_comm_us[v] = a.result.cp_comm_us[v] * share;
  }
  const double gpu_steps = g.steps.empty() ? 1.0 : static_cast<double>(g.steps.size());
  const std::vector<carbon::TracedBusy> busy =
      carbon::batch_kernel_busy_us(g, db, a.grid.batch, a.result, pricing);
  a.energy_j.resize(a.grid.batch.count);
  for (uint32_t v = 0; v < a.grid.batch.count; ++v)
    a.energy_j[v] = carbon::trace_step_energy(db.gpu(a.grid.variant_gpu[v]), db.carbon, 1.0,
                                              a.step_us[v], busy[v], gpu_steps)
                        .gpu_j();
  a.on_front.assign(a.grid.batch.count, false);
  for (uint32_t v : replay::pareto_front({a.step_us, a.energy_j})) a.on_front[v] = true;
  return a;
}

}  // namespace lumos::estimate
