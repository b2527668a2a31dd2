// Runs a sweep (sweep_spec.hpp) through the batch engine (engine/engine.hpp; auto takes the GPU
// when one is visible): configurations that differ only in durations (GPU type, network, region,
// speed factors, a stack's constants) share one graph structure, so each group builds one step
// graph, compiles one replay program and replays all its configurations in one batch, each with
// its kernel kinds' durations from the cost model (model slots). Every row equals what `lumos
// estimate` gives for that configuration. Infeasible configurations are kept, with the reason.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "engine/engine.hpp"
#include "sweep/sweep_spec.hpp"

namespace lumos::sweep {

struct SweepRow {
  SweepVariant variant;  // cfg.gpus_per_node and topology resolved
  // Whether the step was replayed: only configurations that fit in the GPU's memory are (the
  // memory is known before any graph is built).
  bool estimated = false;
  bool feasible = false;  // estimated: a valid layout that fits and could be modelled
  std::string reason;     // why not feasible; empty when feasible
  double step_time_us = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double memory_gib = 0;    // the worst stage's per-GPU memory
  double capacity_gib = 0;  // the GPU's
  double time_to_train_h = 0;
  double gpu_hours = 0;
  double gpu_power_w = 0;  // mean per GPU over the step (idle and kernels)
  // Whole run (carbon/energy.hpp): GPUs, the rest of the nodes, the facility's overhead (PUE),
  // their sum; the grid's intensity, operational carbon, the hardware's embodied share (SCI's
  // M, beside, never added into the operational carbon) and SCI.
  double gpu_energy_kwh = 0, node_energy_kwh = 0, facility_energy_kwh = 0, energy_kwh = 0;
  double grid_g_per_kwh = 0, operational_kg = 0, embodied_kg = 0, sci_kg = 0;
};

struct SweepStats {
  uint64_t variants = 0;   // configurations of the spec (all shards)
  uint64_t rows = 0;       // in this shard
  uint64_t groups = 0;     // graph structures in this shard
  uint64_t graphs = 0;     // graphs built
  uint64_t estimated = 0;  // rows replayed
  // Summed over threads: counting, building and compiling graphs (and handing their memory
  // back), pricing kernels and slots, replaying, and waiting for the memory budget.
  double build_s = 0, price_s = 0, replay_s = 0, wait_s = 0;
  double total_s = 0;  // wall clock
};

struct SweepResult {
  std::vector<SweepRow> rows;  // in variant order
  SweepStats stats;
};

struct SweepOptions {
  uint32_t shard = 0, shards = 1;  // this process runs the groups g with g % shards == shard
  int threads = 0;                 // 0: all cores
  double memory_budget_bytes = 4.0 * 1024 * 1024 * 1024;  // graphs built at once
  bool fold_layers = true;  // LayerFold (model/step_graph.hpp); off builds every layer
  // A graph that alone needs more than the budget: built alone (false), or the configuration is
  // not estimated, "graph too large for the memory budget" (true: the budget is a hard bound).
  bool budget_is_hard = false;
  // Which backend replays each batch (engine.hpp): auto takes the GPU when one is visible.
  engine::Backend backend = engine::Backend::kAuto;
  // Called after each group with rows done and rows of the shard (from one thread at a time).
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// Throws InputError for an unknown GPU, topology or stack, a shard outside its count, or an
// empty sweep.
SweepResult run_sweep(const SweepSpec& spec, const cost::KernelsDb& db, const SweepOptions& opt);
// The same over configurations the caller chose (the layout search's, from its own
// enumeration): of `spec` only the model, tokens to train, cost options and adjust_costs count.
// Rows keep the variants' order; indices need not be contiguous.
SweepResult run_sweep(const SweepSpec& spec, const std::vector<SweepVariant>& variants,
                      const cost::KernelsDb& db, const SweepOptions& opt);

}  // namespace lumos::sweep
