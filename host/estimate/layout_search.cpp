#include "estimate/layout_search.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#ifdef __GLIBC__
#include <malloc.h>  // malloc_trim
#endif

#include "common/error.hpp"
#include "common/memory_budget.hpp"
#include "common/thread_pool.hpp"
#include "model/memory_footprint.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"

namespace lumos::estimate {

using namespace lumos::model;

SearchResult search_layouts(const SearchRequest& req, const cost::KernelsDb& db) {
  LUMOS_EXPECT(req.gpus >= 1 && req.gpus <= (int64_t{1} << 20),
               "layout search: --gpus must be between 1 and 2^20");
  const cost::GpuSpec& gpu = db.gpu(req.base.gpu);
  cost::Topology topo =
      req.base.topology.empty() ? db.default_topology_for(gpu) : db.topology(req.base.topology);
  if (req.base.nic_gbps > 0) topo.nic_gbps = req.base.nic_gbps;
  const double capacity = gpu.hbm_gib * 1024.0 * 1024.0 * 1024.0;
  const cost::StackSpec& stack =
      db.stack(req.base.cfg.stack.empty() ? db.default_stack : req.base.cfg.stack);
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
                fitting.push_back(c);
              }
      }
  out.rows.resize(fitting.size());
  MemoryBudget budget(req.memory_budget_bytes);
  std::atomic<size_t> next{0};
  // Per layout: 0 estimated, 1 graph too large, 2 failed (the first failure is rethrown).
  std::vector<int> outcome(fitting.size(), 0);
  std::vector<std::exception_ptr> failure(fitting.size());
  auto work = [&] {
    for (size_t i = next++; i < fitting.size(); i = next++) {
      try {
        EstimateRequest r = req.base;
        r.cfg = fitting[i];
        const Layout l = check_layout(m, r.cfg);
        const StepCosts costs = price_step(m, r.cfg, l, db, gpu, topo, r.options);
        const uint64_t nodes = step_graph_size(m, r.cfg, l, costs, kMaxStepGraphNodes);
        const double need = static_cast<double>(nodes) * kEstimateBytesPerNode;
        if (nodes > kMaxStepGraphNodes || need > req.memory_budget_bytes) {
          outcome[i] = 1;
          continue;
        }
        const MemoryBudget::Hold hold(budget, need);
        out.rows[i] = {fitting[i], run_estimate(r, db).estimate};
#ifdef __GLIBC__
        // glibc keeps a freed graph's pages in the thread's arena; give them back, so that the
        // budget bounds the process and not only the graphs alive at once.
        malloc_trim(0);
#endif
      } catch (...) {
        outcome[i] = 2;
        failure[i] = std::current_exception();
      }
    }
  };
  run_workers(worker_threads(req.threads), work);
  for (const auto& f : failure)
    if (f) std::rethrow_exception(f);
  std::vector<SearchRow> kept;
  for (size_t i = 0; i < fitting.size(); ++i)
    if (outcome[i] == 0)
      kept.push_back(std::move(out.rows[i]));
    else
      ++out.too_large;
  std::stable_sort(kept.begin(), kept.end(), [](const SearchRow& a, const SearchRow& b) {
    return a.estimate.tokens_per_s > b.estimate.tokens_per_s;
  });
  out.rows = std::move(kept);
  return out;
}

}  // namespace lumos::estimate
