#include "sweep/batch_fold.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "sweep/batch_fold_products.hpp"

// As the batch replay's tile loop: the lane loops built once per instruction set, one picked at
// load time.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__NVCC__)
#define LUMOS_LANE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LUMOS_LANE_CLONES
#endif

namespace lumos::sweep {
namespace {

using maxplus::kNoPath;
using maxplus::LaneMatrix;
using maxplus::max_plus_power;
using maxplus::PeriodPowers;
using maxplus::power_from_squares;
using maxplus::UnwrittenAllocator;
using model::LayerFold;
using model::ModelSlot;

// A fold's small graph (LayerFold, MicrobatchFold): its nodes, their in-edges and how many of
// the first nodes stand for its inputs.
struct FoldGraph {
  const std::vector<LayerFold::Node>& nodes;
  const std::vector<uint32_t>& edge_begin;
  const std::vector<uint32_t>& edge_src;
  const std::vector<double>& edge_lag_us;
  size_t inputs;
};

// One replay of a fold graph over lanes (Lanes::replay_from): its state and shape.
struct NodeReplay {
  const FoldGraph& f;
  const double* durations;  // [(n - inputs) * lanes + v]
  double* finish;           // [n * width + x], width = lanes * inputs
  uint8_t* reached;         // [n]
  size_t lanes, inputs;
};

// Nodes [first, last) of the replay in order: each node starts at its latest reached
// predecessor's finish plus the edge's lag, and finishes its duration later. The start is
// gathered in the node's own finish lanes (the first reached predecessor's sum, then the
// maximum with each other's: max(kNoPath, x) is x, so the bits are those of a maximum started at
// kNoPath). `Width` is the lanes of a node when the compiler knows them (0: r.lanes * r.inputs),
// which lets it unroll the lane loops.
template <size_t Width>
[[gnu::always_inline]] inline void replay_nodes_of_width(
    const NodeReplay& r, std::vector<uint32_t>::const_iterator first,
    std::vector<uint32_t>::const_iterator last) {
  const FoldGraph& f = r.f;
  const size_t V = r.lanes, W = Width ? Width : V * r.inputs;
  for (; first != last; ++first) {
    const size_t n = *first;
    double* __restrict fn = r.finish + n * W;
    bool any = false;
    for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e) {
      const uint32_t src = f.edge_src[e];
      if (!r.reached[src]) continue;  // kNoPath in every lane: it changes no start
      const double lag = f.edge_lag_us[e];
      const double* __restrict fs = r.finish + static_cast<size_t>(src) * W;
      if (!any)
        for (size_t x = 0; x < W; ++x) fn[x] = fs[x] + lag;
      else
        for (size_t x = 0; x < W; ++x) fn[x] = std::max(fn[x], fs[x] + lag);
      any = true;
    }
    if (!any) continue;
    r.reached[n] = 1;
    const double* d = r.durations + (n - f.inputs) * V;
    for (size_t g = 0; g < r.inputs; ++g)
      for (size_t v = 0; v < V; ++v) fn[g * V + v] += d[v];
  }
}

// Built per instruction set, as the lane loops below. A node has 32 lanes in most replays (up to
// 32 lanes a node: Lanes::group).
LUMOS_LANE_CLONES void replay_nodes(const NodeReplay& r,
                                    std::vector<uint32_t>::const_iterator first,
                                    std::vector<uint32_t>::const_iterator last) {
  if (r.lanes * r.inputs == 32)
    replay_nodes_of_width<32>(r, first, last);
  else
    replay_nodes_of_width<0>(r, first, last);
}

// The batch's configurations, one lane each: what the fold graphs' nodes take in each lane.
class Lanes {
 public:
  Lanes(const std::vector<model::ClassSpeeds>& speeds, const std::vector<double>& slot_us)
      : count_(speeds.size()),
        slot_us_(&slot_us),
        inv_speed_(kClasses * count_),
        none_(count_, kNoPath) {
    // As the replay of one configuration: a node without a slot takes its duration times the
    // inverse of its class's speed.
    for (size_t c = 0; c < kClasses; ++c)
      for (size_t v = 0; v < count_; ++v)
        inv_speed_[c * count_ + v] = 1.0 / static_cast<double>(speeds[v][c]);
  }
  // Lanes whose graphs' durations are given (prepare), never taken from slots.
  explicit Lanes(size_t count) : count_(count), slot_us_(nullptr), none_(count, kNoPath) {}
  size_t count() const { return count_; }
  // Lanes of the fold matrices: the configurations', then lanes without a path up to a multiple
  // of 4 (from 2 configurations on). The products take lanes 8, 4 and then 1 at a time, and a
  // lane alone costs about what 4 or 8 together do; a padded lane adds kNoPath to kNoPath and
  // changes no configuration's lanes.
  size_t matrix_lanes() const { return matrix_lanes(count_); }
  static size_t matrix_lanes(size_t count) { return count < 2 ? count : (count + 3) / 4 * 4; }

  // Each node's duration past the inputs in every lane (n * count + v), as the replay takes it.
  std::vector<double> durations(const FoldGraph& f) const {
    const size_t V = count_;
    std::vector<double> out;
    out.reserve((f.nodes.size() - f.inputs) * V);
    for (size_t n = f.inputs; n < f.nodes.size(); ++n) {
      const LayerFold::Node& node = f.nodes[n];
      for (size_t v = 0; v < V; ++v)
        out.push_back(node.slot >= 0 ? (*slot_us_)[static_cast<size_t>(node.slot) * V + v]
                                     : node.dur_us * inv_speed_[node.cls * V + v]);
    }
    return out;
  }

  // What the replays of graph `f` from each of its inputs share, found once: its nodes'
  // durations (`durations`, as durations(f) gives them: the same products; read, not copied, so
  // the caller keeps them until its replays are done), the nodes some output depends on (the
  // others are not replayed: nothing read depends on them) and each input's first reader (no
  // node before it is reached from that input), and the inputs in the order of their first
  // readers, so that the inputs replayed together start near one another: a replay walks the
  // nodes from its inputs' earliest reader on, and grouped in their own order the large sweep's
  // inputs walked a third more nodes than each alone would.
  void prepare(const FoldGraph& f, const std::vector<double>& durations,
               const std::vector<uint32_t>& outputs) {
    const size_t n_nodes = f.nodes.size();
    durations_ = durations.data();
    std::vector<uint8_t> useful(n_nodes, 0);
    for (const uint32_t o : outputs) useful[o] = 1;
    for (size_t n = n_nodes; n-- > f.inputs;)
      if (useful[n])
        for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e) useful[f.edge_src[e]] = 1;
    useful_.clear();
    for (size_t n = f.inputs; n < n_nodes; ++n)
      if (useful[n]) useful_.push_back(static_cast<uint32_t>(n));
    first_reader_.assign(f.inputs, static_cast<uint32_t>(n_nodes));
    for (size_t n = f.inputs; n < n_nodes; ++n)
      for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e)
        if (f.edge_src[e] < f.inputs)
          first_reader_[f.edge_src[e]] = std::min(first_reader_[f.edge_src[e]], uint32_t(n));
    order_.resize(f.inputs);
    for (size_t x = 0; x < f.inputs; ++x) order_[x] = static_cast<uint32_t>(x);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](uint32_t a, uint32_t b) { return first_reader_[a] < first_reader_[b]; });
  }
  // The x-th input in the order of their first readers.
  size_t input(size_t x) const { return order_[x]; }

  // How many inputs one replay starts from (up to 32 lanes a node): lanes of one input are few
  // when configurations are (one in a layout search), and the walk over the graph's nodes and
  // edges is shared. Measured on the large sweep's 16-lane batches: two inputs a replay spend 15%
  // less in it than one, four no less than two.
  size_t group() const { return std::clamp<size_t>(32 / count_, 1, 8); }

  // The graph prepared last replayed from each of inputs input(first), ..., input(first + inputs
  // - 1) alone at 0, the other inputs never finishing, in lanes of its own (input(first + g):
  // lanes [g * count, (g + 1) * count)): each node starts at its latest predecessor's finish plus
  // the edge's lag. Then finish(n, g) is node n's finish in input(first + g)'s lanes, kNoPath
  // where no path reaches it. A lane computes what a replay from its input alone computes: a
  // predecessor its input does not reach holds kNoPath there and changes no start, and a node it
  // does not reach ends at kNoPath (its start kNoPath plus its duration).
  void replay_from(const FoldGraph& f, size_t first, size_t inputs) {
    const size_t n_nodes = f.nodes.size(), V = count_, W = inputs * V;
    width_ = W;
    finish_.resize(n_nodes * W);
    reached_.assign(n_nodes, 0);
    size_t begin = n_nodes;
    for (size_t g = 0; g < inputs; ++g) {
      const size_t x = order_[first + g];
      double* fi = finish_.data() + x * W;
      std::fill_n(fi, W, kNoPath);
      std::fill_n(fi + g * V, V, 0.0);
      reached_[x] = uint8_t{1};
      begin = std::min<size_t>(begin, first_reader_[x]);
    }
    replay_nodes({f, durations_, finish_.data(), reached_.data(), V, inputs},
                 std::lower_bound(useful_.begin(), useful_.end(), begin), useful_.end());
  }
  const double* finish(size_t n, size_t g) const {
    return reached_[n] ? finish_.data() + n * width_ + g * count_ : none_.data();
  }

 private:
  static constexpr size_t kClasses = std::tuple_size_v<model::ClassSpeeds>;
  size_t count_;
  const std::vector<double>* slot_us_;
  std::vector<double> inv_speed_;  // [class * count + v]
  std::vector<double> none_;
  std::vector<double, UnwrittenAllocator<double>> finish_;  // read only where written
  // Of the graph prepared last.
  const double* durations_ = nullptr;  // [(n - inputs) * count + v], the caller's
  std::vector<uint32_t> useful_;       // past the inputs, in order
  std::vector<uint8_t> reached_;
  std::vector<uint32_t> first_reader_, order_;
  size_t width_ = 0;  // lanes of one node in finish_
};

// The lanes of a fold graph whose nodes' durations (`durations`, [node * lanes + v]) are the same
// to the bit as those of an earlier lane: first_of[v] is lane v's first equal lane's place in
// `distinct`. Such lanes have the same matrix and powers, computed once in fewer lanes (only where
// that takes fewer matrix lanes) and copied to the others. In the large sweep 13% of the period
// products' lanes repeated another (another NIC rate where the period crosses no node, say).
struct DistinctLanes {
  std::vector<size_t> first_of, distinct;
  size_t lanes = 0;
  DistinctLanes(const std::vector<double>& durations, size_t lanes_)
      : first_of(lanes_), lanes(lanes_) {
    const size_t rows = lanes ? durations.size() / lanes : 0;
    for (size_t v = 0; v < lanes; ++v) {
      auto same = [&](size_t u) {
        for (size_t n = 0; n < rows; ++n)
          if (std::memcmp(&durations[n * lanes + u], &durations[n * lanes + v], sizeof(double)))
            return false;
        return true;
      };
      size_t x = 0;
      while (x < distinct.size() && !same(distinct[x])) ++x;
      if (x == distinct.size()) distinct.push_back(v);
      first_of[v] = x;
    }
  }
  bool fewer() const { return Lanes::matrix_lanes(distinct.size()) < Lanes::matrix_lanes(lanes); }
  // The distinct lanes' durations.
  std::vector<double> few(const std::vector<double>& durations) const {
    const size_t U = distinct.size(), rows = durations.size() / lanes;
    std::vector<double> out(rows * U);
    for (size_t n = 0; n < rows; ++n)
      for (size_t x = 0; x < U; ++x) out[n * U + x] = durations[n * lanes + distinct[x]];
    return out;
  }
  // A matrix of the distinct lanes in every lane.
  LaneMatrix all(const LaneMatrix& few) const {
    LaneMatrix out(few.k, lanes, LaneMatrix::Unwritten{});
    for (size_t e = 0; e < few.k * few.k; ++e)
      for (size_t v = 0; v < lanes; ++v) out.m[e * lanes + v] = few.m[e * few.lanes + first_of[v]];
    out.row_bits = few.row_bits, out.col_bits = few.col_bits;
    return out;
  }
};

// Each layer fold's run: the layer's matrix (from each frontier entry, the latest of each
// entry's outputs) to the power of its layers.
LaneMatrix layer_run(const LayerFold& f, Lanes& lanes, const std::vector<double>& durations) {
  constexpr size_t kK = LayerFold::kFrontier;
  const size_t V = lanes.count();
  const FoldGraph layer{f.nodes, f.edge_begin, f.edge_src, f.edge_lag_us, kK};
  std::vector<uint32_t> outputs;
  for (const std::vector<uint32_t>& o : f.outputs)
    outputs.insert(outputs.end(), o.begin(), o.end());
  lanes.prepare(layer, durations, outputs);
  LaneMatrix one(kK, lanes.matrix_lanes());
  for (size_t i0 = 0; i0 < kK; i0 += lanes.group()) {
    const size_t inputs = std::min(lanes.group(), kK - i0);
    lanes.replay_from(layer, i0, inputs);
    for (size_t g = 0; g < inputs; ++g)
      for (size_t j = 0; j < kK; ++j) {
        double* e = one.at(lanes.input(i0 + g), j);
        for (uint32_t o : f.outputs[j]) {
          const double* fo = lanes.finish(o, g);
          for (size_t v = 0; v < V; ++v) e[v] = std::max(e[v], fo[v]);
        }
      }
  }
  one.find_paths();
  return max_plus_power(std::move(one), f.layers);
}

// Each layer fold's run: its layer_run in every lane, those of lanes whose layer repeats
// another's taken once (DistinctLanes).
std::vector<LaneMatrix> layer_runs(const model::StepGraph& g, Lanes& lanes) {
  std::vector<LaneMatrix> runs;
  for (const LayerFold& f : g.folds) {
    const FoldGraph layer{f.nodes, f.edge_begin, f.edge_src, f.edge_lag_us, LayerFold::kFrontier};
    const std::vector<double> durations = lanes.durations(layer);
    const DistinctLanes d(durations, lanes.count());
    if (!d.fewer()) {
      runs.push_back(layer_run(f, lanes, durations));
      continue;
    }
    Lanes few(d.distinct.size());
    runs.push_back(d.all(layer_run(f, few, d.few(durations))));
  }
  return runs;
}

}  // namespace

// A period met before: its graph and its nodes' durations in every lane (what its matrix is
// computed from, compared whole), and its matrix's powers.
struct FoldPowers::Kept {
  std::vector<uint32_t> edge_begin, edge_src, outputs;
  std::vector<double> edge_lag_us, durations;
  PeriodPowers powers;
  bool same_period(const model::MicrobatchFold& f, const std::vector<double>& d) const {
    return powers.squares.front().k == f.inputs && edge_begin == f.edge_begin &&
           edge_src == f.edge_src && outputs == f.outputs && edge_lag_us == f.edge_lag_us &&
           durations == d;
  }
};

FoldPowers::FoldPowers() = default;
FoldPowers::~FoldPowers() = default;

namespace {

// A period's matrix (from each state entry, each entry's output) to the power of its folded
// periods in `lanes`, its nodes' durations `durations` ([node * lanes + v]); `powers` (if any)
// keeps its squarings for a later batch with the same matrix, and may hold the result, which a
// later period's may replace.
const LaneMatrix& period_power(const model::MicrobatchFold& f, Lanes& lanes,
                               std::vector<double> durations, FoldPowers* powers,
                               LaneMatrix* scratch) {
  const size_t k = f.inputs, V = lanes.count();
  const FoldGraph period{f.nodes, f.edge_begin, f.edge_src, f.edge_lag_us, k};
  auto one_period = [&] {
    lanes.prepare(period, durations, f.outputs);
    LaneMatrix one(k, lanes.matrix_lanes());
    for (size_t i0 = 0; i0 < k; i0 += lanes.group()) {
      const size_t inputs = std::min(lanes.group(), k - i0);
      lanes.replay_from(period, i0, inputs);
      for (size_t g = 0; g < inputs; ++g)
        for (size_t j = 0; j < k; ++j)
          std::copy_n(lanes.finish(f.outputs[j], g), V, one.at(lanes.input(i0 + g), j));
    }
    one.find_paths();
    return one;
  };
  if (!powers) return *scratch = max_plus_power(one_period(), f.periods);
  std::vector<FoldPowers::Kept>& kept = powers->kept_;
  auto same = std::find_if(kept.begin(), kept.end(), [&](const FoldPowers::Kept& e) {
    return e.powers.squares.front().lanes == lanes.matrix_lanes() && e.same_period(f, durations);
  });
  if (same == kept.end()) {
    LaneMatrix one = one_period();  // before `durations` moves into the kept period
    if (kept.size() == FoldPowers::kKept) kept.erase(kept.begin());
    kept.push_back({f.edge_begin,
                    f.edge_src,
                    f.outputs,
                    f.edge_lag_us,
                    std::move(durations),
                    {{std::move(one)}, {}}});
    same = kept.end() - 1;
  }
  return power_from_squares(&same->powers, f.periods, scratch);
}

// Each micro-batch fold's periods (period_power). take(fold, power, lane_of) is called with each
// fold's power: lane v's entries are the power's lane lane_of[v] (v where lane_of is null), those
// of lanes whose period repeats another's taken once (DistinctLanes).
void period_runs(const model::StepGraph& g, Lanes& lanes, FoldPowers* powers,
                 const std::function<void(size_t, const LaneMatrix&, const size_t*)>& take) {
  LaneMatrix scratch(0, 0);
  for (size_t fi = 0; fi < g.microbatch_folds.size(); ++fi) {
    const model::MicrobatchFold& f = g.microbatch_folds[fi];
    const FoldGraph period{f.nodes, f.edge_begin, f.edge_src, f.edge_lag_us, f.inputs};
    std::vector<double> durations = lanes.durations(period);
    const DistinctLanes d(durations, lanes.count());
    if (!d.fewer()) {
      take(fi, period_power(f, lanes, std::move(durations), powers, &scratch), nullptr);
      continue;
    }
    Lanes few(d.distinct.size());
    take(fi, period_power(f, few, d.few(durations), powers, &scratch), d.first_of.data());
  }
}

}  // namespace

void batch_fold_slot_durations(const model::StepGraph& g,
                               const std::vector<model::ClassSpeeds>& speeds,
                               std::vector<double>* slot_us, FoldPowers* powers) {
  if (g.folds.empty() && g.microbatch_folds.empty()) return;
  const size_t V = speeds.size();
  Lanes lanes(speeds, *slot_us);
  // Layer folds first: a folded period's nodes include folded layers.
  const std::vector<LaneMatrix> layers = layer_runs(g, lanes);
  for (size_t s = 0; s < g.slots.size(); ++s)
    if (g.slots[s].source == ModelSlot::Source::kFolded) {
      const auto entry = static_cast<size_t>(g.slots[s].params);
      const LaneMatrix& run = layers[g.slots[s].index];
      std::copy_n(run.at(entry / LayerFold::kFrontier, entry % LayerFold::kFrontier), V,
                  slot_us->data() + s * V);
    }
  // Each fold's slots, computed from the slots as they were before any fold's: written as its
  // power is taken where no period reads a folded period's slot (a period's nodes are kernel
  // kinds and folded layers), else kept and written once every fold's power is taken.
  std::vector<std::vector<size_t>> fold_slots(g.microbatch_folds.size());
  for (size_t s = 0; s < g.slots.size(); ++s)
    if (g.slots[s].source == ModelSlot::Source::kFoldedPeriods)
      fold_slots[g.slots[s].index].push_back(s);
  bool periods_read_periods = false;
  for (const model::MicrobatchFold& f : g.microbatch_folds)
    for (const LayerFold::Node& node : f.nodes)
      periods_read_periods = periods_read_periods ||
                             (node.slot >= 0 && g.slots[static_cast<size_t>(node.slot)].source ==
                                                    ModelSlot::Source::kFoldedPeriods);
  std::vector<std::vector<double>> taken(g.microbatch_folds.size());
  period_runs(g, lanes, powers, [&](size_t fold, const LaneMatrix& run, const size_t* lane_of) {
    if (periods_read_periods) taken[fold].resize(fold_slots[fold].size() * V);
    for (size_t x = 0; x < fold_slots[fold].size(); ++x) {
      const size_t s = fold_slots[fold][x];
      const double* e = run.m.data() + static_cast<size_t>(g.slots[s].params) * run.lanes;
      double* out = periods_read_periods ? taken[fold].data() + x * V : slot_us->data() + s * V;
      for (size_t v = 0; v < V; ++v) out[v] = e[lane_of ? lane_of[v] : v];
    }
  });
  if (periods_read_periods)
    for (size_t fold = 0; fold < fold_slots.size(); ++fold)
      for (size_t x = 0; x < fold_slots[fold].size(); ++x)
        std::copy_n(taken[fold].data() + x * V, V, slot_us->data() + fold_slots[fold][x] * V);
}

}  // namespace lumos::sweep
