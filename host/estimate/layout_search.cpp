#include "estimate/layout_search.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include "common/error.hpp"
#include "common/heap_tuning.hpp"
#include "common/memory_budget.hpp"
#include "common/thread_pool.hpp"
#include "model/graph_budget.hpp"
#include "model/memory_footprint.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/sweep_run.hpp"

namespace lumos::estimate {

using namespace lumos::model;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

SearchResult search_layouts(const SearchRequest& req, const cost::KernelsDb& db) {
  LUMOS_EXPECT(req.gpus >= 1 && req.gpus <= (int64_t{1} << 20),
               "layout search: --gpus must be between 1 and 2^20");
  const cost::GpuSpec gpu = req.base.nvlink_gbps > 0
                                ? cost::with_nvlink_gbps(db.gpu(req.base.gpu), req.base.nvlink_gbps)
                                : db.gpu(req.base.gpu);
  cost::Topology topo =
      req.base.topology.empty() ? db.default_topology_for(gpu) : db.topology(req.base.topology);
  if (req.base.nic_gbps > 0) topo.nic_gbps = req.base.nic_gbps;
  if (req.base.gpus_per_node > 0) topo.gpus_per_node = req.base.gpus_per_node;
  const double capacity = gpu.hbm_gib * 1024.0 * 1024.0 * 1024.0;
  const cost::StackSpec& stack =
      db.stack(req.base.cfg.stack.empty() ? db.default_stack : req.base.cfg.stack);
  check_stack_settings(req.base.cfg, stack, db);
  if (!gpu.peak_tflops[static_cast<size_t>(req.base.cfg.dtype)])
    throw InputError("--dtype " + std::string(cost::to_string(req.base.cfg.dtype)) + ": the " +
                     gpu.name + " has no " + cost::to_string(req.base.cfg.dtype) + " tensor cores");
  SearchResult out;
  std::vector<ParallelConfig> fitting;
  const ModelSpec& m = req.base.model;
  for (int tp = 1; tp <= std::min(req.max_tp, topo.gpus_per_node); tp *= 2)
    for (int cp : {1, 2, 4})
      for (int pp = 1; pp <= req.max_pp; ++pp) {
        const int64_t model_gpus = int64_t{tp} * cp * pp;
        if (req.gpus % model_gpus) continue;
        const int64_t dp = req.gpus / model_gpus;
        for (int64_t mbs : req.mbs)
          for (int v = 1; v <= (pp > 1 ? req.max_interleave : 1); ++v)
            for (Recompute rc : {Recompute::kNone, Recompute::kFull})
              for (bool split : {false, true}) {
                ParallelConfig c = req.base.cfg;
                c.tp = tp, c.cp = cp, c.pp = pp, c.dp = static_cast<int>(dp), c.mbs = mbs;
                c.interleave = v;
                c.recompute = rc;
                c.sequence_parallel = tp > 1;
                c.distributed_optimizer = dp * cp > 1 && !c.fsdp;
                c.split_counts_embedding = split;
                c.gpus_per_node = topo.gpus_per_node;
                // The embedding/loss split only where the plain split does not work.
                if (split && m.layers % (int64_t{pp} * v) == 0) continue;
                ++out.candidates;
                Layout l;
                try {
                  l = check_layout(m, c);
                } catch (const InputError&) {
                  ++out.invalid;
                  continue;
                }
                double worst = 0;
                for (const auto& s : memory_per_stage(m, c, l, &stack))
                  worst = std::max(worst, s.total_bytes());
                if (worst > capacity) {
                  ++out.too_big;
                  continue;
                }
                if (worst > capacity * (1.0 - req.min_headroom_fraction)) {
                  ++out.too_tight;
                  continue;
                }
                fitting.push_back(c);
              }
      }
  out.stack = stack.name;
  out.gpu = gpu.name, out.topology = topo.name, out.capacity_bytes = capacity;
  out.nic_gbps = topo.nic_gbps, out.nvlink_gbps = gpu.nvlink_gbps;
  out.gpus_per_node = topo.gpus_per_node;
  if (fitting.empty()) return out;

  // Rank: every fitting layout is one configuration of a sweep.
  const auto t0 = std::chrono::steady_clock::now();
  sweep::SweepSpec spec;
  spec.model = m;
  spec.cost_options = req.base.options;
  spec.adjust_costs = req.base.adjust_costs;
  std::vector<sweep::SweepVariant> variants(fitting.size());
  for (size_t i = 0; i < fitting.size(); ++i) {
    variants[i].index = i;
    variants[i].cfg = fitting[i];
    variants[i].gpu = req.base.gpu;
    variants[i].topology = req.base.topology;
    variants[i].nic_gbps = req.base.nic_gbps;
    variants[i].gpus_per_node = req.base.gpus_per_node;
    variants[i].nvlink_gbps = req.base.nvlink_gbps;
  }
  sweep::SweepOptions opt;
  opt.threads = req.threads;
  opt.memory_budget_bytes = req.memory_budget_bytes;
  opt.budget_is_hard = true;
  opt.progress = req.rank_progress;
  const sweep::SweepResult ranked = sweep::run_sweep(spec, variants, db, opt);
  out.graphs = ranked.stats.graphs;
  const double params = static_cast<double>(
      parameter_counts(m, check_layout(m, fitting[0]).padded_vocab).total(m.layers));
  for (const sweep::SweepRow& r : ranked.rows) {
    if (!r.feasible) {  // fits and is valid: only a graph too large to model is left
      ++out.too_large;
      continue;
    }
    SearchRow row;
    row.cfg = r.variant.cfg;
    row.step_time_us = r.step_time_us;
    row.tokens_per_s = r.tokens_per_s;
    row.mfu = r.mfu;
    row.model_tflops_per_gpu = r.mfu * *gpu.peak_tflops[static_cast<size_t>(row.cfg.dtype)];
    row.memory_bytes = r.memory_gib * 1024.0 * 1024.0 * 1024.0;
    row.step_range = step_range(db, gpu.name, stack.name, static_cast<double>(row.cfg.gpus()),
                                params, row.step_time_us);
    out.rows.push_back(std::move(row));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const SearchRow& a, const SearchRow& b) {
    return a.tokens_per_s > b.tokens_per_s;
  });
  out.rank_s = seconds_since(t0);

  // Detail: the fastest rows estimated in full, within the memory budget.
  const auto t1 = std::chrono::steady_clock::now();
  const size_t detailed = std::min(req.detailed, out.rows.size());
  MemoryBudget budget(req.memory_budget_bytes);
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> failure(detailed);
  std::mutex progress_mutex;
  size_t finished = 0;
  auto work = [&] {
    for (size_t i = next++; i < detailed; i = next++) {
      try {
        SearchRow& row = out.rows[i];
        EstimateRequest r = req.base;
        r.cfg = row.cfg;
        const Layout l = check_layout(m, r.cfg);
        StepCosts costs = price_step(m, r.cfg, l, db, gpu, topo, r.options);
        if (r.adjust_costs) r.adjust_costs(costs);
        const uint64_t most =
            static_cast<uint64_t>(req.memory_budget_bytes / kEstimateBytesPerNode);
        const uint64_t nodes =
            step_graph_size(m, r.cfg, l, costs, std::min(most, kMaxStepGraphNodes));
        if (nodes > most || nodes > kMaxStepGraphNodes) continue;
        const MemoryBudget::Hold hold(budget, static_cast<double>(nodes) * kEstimateBytesPerNode);
        row.breakdown = run_estimate(r, db).estimate.breakdown;
        row.detailed = true;
        // glibc keeps a freed graph's pages in the thread's arena: given back once the process
        // grows past the budget, so that it bounds the process and not only the graphs alive.
        trim_heap_above(req.memory_budget_bytes);
      } catch (...) {
        failure[i] = std::current_exception();
      }
      if (req.detail_progress) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        req.detail_progress(++finished, detailed);
      }
    }
  };
  run_workers(worker_threads(req.threads), work);
  // Rows too large to estimate in full were skipped without a count: the line ends here.
  if (req.detail_progress) req.detail_progress(detailed, detailed);
  for (const auto& f : failure)
    if (f) std::rethrow_exception(f);
  out.detail_s = seconds_since(t1);
  return out;
}

}  // namespace lumos::estimate
