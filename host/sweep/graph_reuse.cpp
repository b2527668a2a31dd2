#include "sweep/graph_reuse.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "model/step_graph_builder.hpp"  // microbatch_plan: which small graph a layout folds

namespace lumos::sweep {
namespace {

// K x K booleans, a row of 64-bit words per entry before the periods: bit j of row i when entry
// j after them has a path from entry i (or rows of other things: see one_period).
class Reach {
 public:
  explicit Reach(size_t k) : Reach(k, k) {}
  Reach(size_t rows, size_t k) : k_(k), words_((k + 63) / 64), bits_(rows * words_, 0) {}
  bool get(size_t i, size_t j) const { return bits_[i * words_ + j / 64] >> (j % 64) & 1; }
  void set(size_t i, size_t j) { bits_[i * words_ + j / 64] |= uint64_t{1} << (j % 64); }
  static Reach identity(size_t k) {
    Reach r(k);
    for (size_t i = 0; i < k; ++i) r.set(i, i);
    return r;
  }
  // Paths through this, then through b.
  Reach then(const Reach& b) const {
    Reach c(k_);
    for (size_t i = 0; i < k_; ++i)
      for (size_t m = 0; m < k_; ++m)
        if (get(i, m))
          for (size_t w = 0; w < words_; ++w) c.bits_[i * words_ + w] |= b.bits_[m * words_ + w];
    return c;
  }
  // Row r gains row s's bits.
  void add_row(size_t r, size_t s) {
    for (size_t w = 0; w < words_; ++w) bits_[r * words_ + w] |= bits_[s * words_ + w];
  }
  bool operator==(const Reach& o) const { return bits_ == o.bits_; }

 private:
  size_t k_, words_;
  std::vector<uint64_t> bits_;
};

// Which state entries after one period have a path from which before it: each node's entries
// as a row of bits (a Reach of the period's nodes), ORed along the in-edges.
Reach one_period(const model::MicrobatchFold& f) {
  const size_t k = f.inputs;
  Reach from(f.nodes.size(), k);
  for (size_t i = 0; i < k; ++i) from.set(i, i);
  for (size_t n = k; n < f.nodes.size(); ++n)
    for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e) from.add_row(n, f.edge_src[e]);
  Reach one(k);
  for (size_t j = 0; j < k; ++j)
    for (size_t i = 0; i < k; ++i)
      if (from.get(f.outputs[j], i)) one.set(i, j);
  return one;
}

Reach power(Reach a, int64_t n, size_t k) {
  Reach r = Reach::identity(k);
  for (; n > 0; n >>= 1) {
    if (n & 1) r = r.then(a);
    if (n > 1) a = a.then(a);
  }
  return r;
}

}  // namespace

bool retarget_folded_periods(model::StepGraph* g, int64_t periods) {
  if (g->microbatch_folds.size() != 1 || periods < 1) return false;
  model::MicrobatchFold& f = g->microbatch_folds.front();
  if (periods == f.periods) return true;
  const size_t k = f.inputs;
  // The entries the graph joins: its kFoldedPeriods slots.
  Reach joined(k);
  for (const model::ModelSlot& s : g->slots)
    if (s.source == model::ModelSlot::Source::kFoldedPeriods) {
      const auto entry = static_cast<size_t>(s.params);
      joined.set(entry / k, entry % k);
    }
  // Those the new count joins; an entry the warm-up's node gives as it is (its output is itself)
  // has none, and one no entry reaches the builder would not fold.
  const Reach want = power(one_period(f), periods, k);
  for (size_t j = 0; j < k; ++j) {
    const bool as_is = f.outputs[j] == j;
    bool any = false;
    for (size_t i = 0; i < k; ++i) {
      const bool path = want.get(i, j) && !as_is;
      if (path != joined.get(i, j)) return false;
      any = any || path;
    }
    if (!as_is && !any) return false;
  }
  // One period more or fewer adds or takes one period's kernels (counts stay non-negative:
  // unsigned arithmetic wraps back).
  const auto more = static_cast<uint64_t>(periods - f.periods);
  for (size_t s = 0; s < f.period_compute_kernels.size(); ++s)
    g->compute_kernels[s] += more * f.period_compute_kernels[s];
  for (size_t s = 0; s < f.period_gpu_kernels.size(); ++s)
    g->gpu_kernels[s] += more * f.period_gpu_kernels[s];
  f.periods = periods;
  return true;
}

namespace {

// The same pipeline: stages, chunks and the layers of each (the family's key holds the rest of
// what shapes the schedule).
bool same_pipeline(const model::ParallelConfig& ca, const model::Layout& a,
                   const model::ParallelConfig& cb, const model::Layout& b) {
  return ca.pp == cb.pp && ca.interleave == cb.interleave && a.chunk_layers == b.chunk_layers &&
         a.chunk_first_layer == b.chunk_first_layer;
}

}  // namespace

std::shared_ptr<const model::StepGraph> FoldedGraphs::reuse(
    const model::ParallelConfig& cfg, const model::Layout& layout, const model::StepCosts& costs,
    const model::ParamPlan& plan, std::shared_ptr<const replay::ReplayProgram>* program) {
  for (size_t i = kept_.size(); i-- > 0;) {
    Kept& k = kept_[i];
    if (!same_pipeline(k.cfg, k.layout, cfg, layout) || !model::same_structure(*k.costs, costs) ||
        !model::same_param_shape(*k.plan, plan))
      continue;
    if (k.small == 0) {  // built whole: the same micro-batches, none of them folded
      if (k.layout.microbatches != layout.microbatches ||
          model::detail::microbatch_plan(cfg, layout).small != 0)
        continue;
    } else {
      const model::detail::MicrobatchPlan mb = model::detail::microbatch_plan(cfg, layout);
      if (mb.small != k.small) continue;
      // The builder folds all periods but the first two (microbatch_fold.cpp).
      if (!retarget_folded_periods(k.graph.get(), mb.periods - 2)) continue;
    }
    *program = k.program;
    std::shared_ptr<const model::StepGraph> g = k.graph;
    std::rotate(kept_.begin() + static_cast<std::ptrdiff_t>(i),
                kept_.begin() + static_cast<std::ptrdiff_t>(i) + 1, kept_.end());
    return g;
  }
  return nullptr;
}

void FoldedGraphs::keep(const model::ParallelConfig& cfg, const model::Layout& layout,
                        std::shared_ptr<const model::StepCosts> costs,
                        std::shared_ptr<const model::ParamPlan> plan,
                        std::shared_ptr<model::StepGraph> g,
                        std::shared_ptr<const replay::ReplayProgram> program) {
  const int64_t small = model::detail::microbatch_plan(cfg, layout).small;
  if (g->microbatch_folds.size() > 1) return;
  if (g->microbatch_folds.empty() && (small != 0 || g->graph.num_nodes() > kKeptUnfoldedNodes))
    return;
  uint64_t nodes = g->graph.num_nodes();
  for (const Kept& k : kept_) nodes += k.graph->graph.num_nodes();
  while (!kept_.empty() && (kept_.size() == kKept || nodes > kKeptNodes)) {
    nodes -= kept_.front().graph->graph.num_nodes();
    kept_.erase(kept_.begin());
  }
  kept_.push_back({layout, cfg, std::move(costs), std::move(plan),
                   g->microbatch_folds.empty() ? 0 : small, std::move(g), std::move(program)});
}

}  // namespace lumos::sweep
