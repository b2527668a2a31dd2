#include "estimate/trace_whatif.hpp"

#include <algorithm>

#include "carbon/energy.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/kernels_db.hpp"
#include "replay/pareto.hpp"
#include "replay/reference_replay.hpp"
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

}  // namespace

whatif::JobStructure describe_job(const graph::LoadedInput& in, const cost::KernelsDb& db) {
  LUMOS_EXPECT(!in.tables().empty(),
               "lumos whatif: " + in.label + ": a .lgraph file has no trace to recognise a job in");
  return whatif::recognise_job(whatif::classify_traced(in.tables(), db));
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
    a.structure = whatif::recognise_job(tk);
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
    a.unedited_us = replay::reference_replay(in.graph).makespan_us;
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
                                  pricing.priced_nodes() > 0 ? &pricing : nullptr);
  std::vector<const cost::GpuSpec*> spec;
  for (const std::string& name : a.grid.variant_gpu) spec.push_back(&db.gpu(name));
  // Each variant's GPU energy per step (carbon/energy.hpp): its matrix kernels' time (traced, by
  // the class's speed-up, or by the priced key's factor on the variant's GPU column) apart from
  // the other compute kernels, copies and communication as replayed. The factors are taken per
  // key and column, not per variant: no second slot table of the grid.
  const std::vector<bool> matrix = carbon::matrix_kernels(g, db);
  const bool priced = pricing.priced_nodes() > 0;
  double unpriced_us = 0;                                        // by the compute class's speed
  std::vector<double> key_us(priced ? pricing.keys() : 0, 0.0);  // by each key's factor
  for (graph::NodeId n = 1; n < g.num_nodes(); ++n) {
    if (!matrix[n] || g.cls[n] != graph::NodeClass::kCompute) continue;
    const int32_t k = priced ? pricing.node_key[n] : -1;
    (k >= 0 ? key_us[static_cast<size_t>(k)] : unpriced_us) += g.dur_us[n];
  }
  const uint32_t columns = priced ? pricing.gpus() : 0;
  std::vector<double> column_us(columns, 0.0);  // the priced matrix time on each GPU column
  const replay::BatchGemmView gemm = pricing.view();
  for (uint32_t k = 0; k < key_us.size(); ++k)
    if (key_us[k] > 0)
      for (uint32_t gi = 0; gi < columns; ++gi)
        column_us[gi] += key_us[k] * replay::gemm_key_factor(gemm, static_cast<int32_t>(k), gi);
  const int compute_cls = static_cast<int>(graph::NodeClass::kCompute);
  a.energy_j.resize(a.grid.batch.count);
  for (uint32_t v = 0; v < a.grid.batch.count; ++v) {
    const auto& busy = a.result.busy_us;
    const double compute = busy[compute_cls][v];
    double matrix_us = unpriced_us / static_cast<double>(a.grid.batch.speed[compute_cls][v]);
    if (priced) matrix_us += column_us[pricing.variant_gpu[v]];
    matrix_us = std::min(matrix_us, compute);
    a.energy_j[v] = carbon::step_energy(
                        *spec[v], db.carbon, 1.0, a.result.makespan_us[v], matrix_us,
                        compute - matrix_us + busy[static_cast<int>(graph::NodeClass::kMemory)][v],
                        busy[static_cast<int>(graph::NodeClass::kComm)][v])
                        .gpu_j();
  }
  a.on_front.assign(a.grid.batch.count, false);
  for (uint32_t v : replay::pareto_front({a.result.makespan_us, a.energy_j})) a.on_front[v] = true;
  return a;
}

}  // namespace lumos::estimate
