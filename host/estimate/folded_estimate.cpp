#include "estimate/folded_estimate.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "replay/reference_replay.hpp"

namespace lumos::estimate {
namespace {

// Figures a whole graph gives per node, extended from three micro-batch counts one period
// apart: a + k (b - a), when c - b = b - a (to `tol`).
class Extension {
 public:
  Extension(double periods, double tol) : k_(periods), tol_(tol) {}
  double operator()(double a, double b, double c) {
    if (std::fabs((c - b) - (b - a)) > tol_) ok_ = false;
    return a + k_ * (b - a);
  }
  replay::Breakdown operator()(const replay::Breakdown& a, const replay::Breakdown& b,
                               const replay::Breakdown& c) {
    replay::Breakdown x;
    x.window_us = (*this)(a.window_us, b.window_us, c.window_us);
    x.exposed_compute_us =
        (*this)(a.exposed_compute_us, b.exposed_compute_us, c.exposed_compute_us);
    x.overlapped_us = (*this)(a.overlapped_us, b.overlapped_us, c.overlapped_us);
    x.exposed_comm_us = (*this)(a.exposed_comm_us, b.exposed_comm_us, c.exposed_comm_us);
    x.bubble_us = (*this)(a.bubble_us, b.bubble_us, c.bubble_us);
    x.other_us = (*this)(a.other_us, b.other_us, c.other_us);
    return x;
  }
  bool ok() const { return ok_; }

 private:
  double k_, tol_;
  bool ok_ = true;
};

std::map<std::string, double> by_name(const std::vector<std::pair<std::string, double>>& v) {
  return {v.begin(), v.end()};
}

// The first of three micro-batch counts `cycle` apart, past the fewest that fold, in the phase of
// the layout's count `m`.
int64_t first_count(const model::ParallelConfig& c, int64_t m, int64_t cycle) {
  const int64_t step = model::microbatches_per_period(c);
  int64_t m0 = step;
  while (!model::folds_microbatches(c, m0)) m0 += step;
  m0 += step;
  return m0 + ((m - m0) % cycle + cycle) % cycle;
}

// The figures of a whole graph at the layout's micro-batch count `m`, extended from whole graphs
// at m0 and two more counts `cycle` apart: false where they do not grow by the same amount
// each cycle or where the extension's step time or a stage's end misses the folded graph's.
bool extend_from_whole_graphs(const EstimateRequest& req, const cost::KernelsDb& db,
                              const model::StepGraph& g, const replay::ReplayResult& replayed,
                              int64_t m0, int64_t cycle, Estimate* out) {
  const Estimate& base = *out;
  const int64_t m = base.layout.microbatches;
  std::array<Estimate, 3> ref;
  for (int i = 0; i < 3; ++i) {
    EstimateRequest r = req;
    r.fold_microbatches = false;
    r.cfg.gbs = (m0 + i * cycle) * int64_t{base.cfg.dp} * base.cfg.mbs;
    ref[static_cast<size_t>(i)] = run_estimate(r, db).estimate;
  }

  Estimate e = base;
  for (graph::NodeId end : g.stage_end)
    e.step_time_us = std::max(e.step_time_us, replayed.finish_us[end]);
  Extension extend(static_cast<double>((m - m0) / cycle), 1e-9 * ref[2].step_time_us);
  const double tol = 1e-9 * e.step_time_us;
  if (std::fabs(extend(ref[0].step_time_us, ref[1].step_time_us, ref[2].step_time_us) -
                e.step_time_us) > tol)
    return false;
  for (size_t s = 0; s < ref[0].stages.size(); ++s) {
    StageReport sr = ref[0].stages[s];
    sr.end_us = replayed.finish_us[g.stage_end[s]];
    if (std::fabs(
            extend(ref[0].stages[s].end_us, ref[1].stages[s].end_us, ref[2].stages[s].end_us) -
            sr.end_us) > tol)
      return false;
    sr.breakdown =
        extend(ref[0].stages[s].breakdown, ref[1].stages[s].breakdown, ref[2].stages[s].breakdown);
    e.stages.push_back(sr);
  }
  e.breakdown = extend(ref[0].breakdown, ref[1].breakdown, ref[2].breakdown);
  e.graph_model_flops =
      extend(ref[0].graph_model_flops, ref[1].graph_model_flops, ref[2].graph_model_flops);
  e.graph_hw_flops = extend(ref[0].graph_hw_flops, ref[1].graph_hw_flops, ref[2].graph_hw_flops);
  const auto k0 = by_name(ref[0].kernel_time_us), k1 = by_name(ref[1].kernel_time_us),
             k2 = by_name(ref[2].kernel_time_us);
  for (const auto& [name, us] : k0) {
    if (!k1.count(name) || !k2.count(name)) return false;
    e.kernel_time_us.emplace_back(name, extend(us, k1.at(name), k2.at(name)));
  }
  std::sort(e.kernel_time_us.begin(), e.kernel_time_us.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!extend.ok() || k1.size() != k0.size() || k2.size() != k0.size()) return false;
  *out = std::move(e);
  return true;
}

}  // namespace

bool fold_estimate(const EstimateRequest& req, const model::StepCosts& costs,
                   const cost::KernelsDb& db, EstimateRun* run) {
  const Estimate& base = run->estimate;
  // Three counts a cycle apart, past the fewest that fold, in the layout's count's phase of the
  // cycle. A steady state may repeat its timing over several periods (the max-plus matrix's
  // cyclicity: 1F1B's over up to p micro-batches), never, in the layouts tested, over more; most
  // repeat every period. Counts one period apart are tried first where their three whole graphs
  // and the folded one are smaller than the layout's whole graph (their graphs are a p-th the
  // size of a cycle of p periods'), then counts p periods apart. A layout with fewer micro-batches
  // than the third count is estimated whole, without building its folded graph first.
  const int64_t step = model::microbatches_per_period(base.cfg);
  const int64_t m = base.layout.microbatches;
  std::vector<std::pair<int64_t, int64_t>> tries;  // (first count, cycle)
  const int64_t m1 = first_count(base.cfg, m, step);
  if (base.cfg.pp > 1 && 4 * m1 + 3 * step <= m) tries.emplace_back(m1, step);
  const int64_t p_cycle = step * base.cfg.pp, mp = first_count(base.cfg, m, p_cycle);
  if (m >= mp + 2 * p_cycle) tries.emplace_back(mp, p_cycle);
  if (tries.empty()) return false;
  model::StepGraph g = model::build_step_graph(base.model, base.cfg, base.layout, costs,
                                               model::kMaxStepGraphNodes, true);
  if (g.microbatch_folds.empty()) return false;
  // Every node's duration under these costs: a folded node takes its matrix entry.
  const std::vector<double> slot_us = model::model_slot_durations(g, costs);
  for (graph::NodeId n = 0; n < g.graph.num_nodes(); ++n)
    if (g.meta_of(n).slot >= 0) g.graph.dur_us[n] = slot_us[static_cast<size_t>(g.meta_of(n).slot)];
  const auto t1 = std::chrono::steady_clock::now();
  replay::ReplayResult replayed = replay::reference_replay(g.graph);
  const double replay_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();

  for (const auto& [m0, cycle] : tries) {
    Estimate e = base;
    if (!extend_from_whole_graphs(req, db, g, replayed, m0, cycle, &e)) continue;
    e.nodes = g.graph.num_nodes();
    e.edges = g.graph.num_edges();
    e.replay_ms = replay_ms;
    run->estimate = std::move(e);
    run->step = std::move(g);
    run->replay = std::move(replayed);
    return true;
  }
  return false;
}

}  // namespace lumos::estimate
