// The steady state of a pipeline schedule folded (MicrobatchFold, docs/design.md "Model
// graphs"): the builder emits the schedule with a few micro-batches, three periods of its steady
// state between the warm-up and the cool-down, and tags each node with its task's period. The
// third period, checked to be the second one period later, becomes a small graph; the graph keeps
// the warm-up, the first two periods and the cool-down, and between them a node per entry of the
// period's max-plus matrix raised to the number of periods the layout's own micro-batches make.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "model/step_graph_builder.hpp"

namespace lumos::model {
namespace detail {

int64_t period_group(const ParallelConfig& c) {
  return c.interleave > 1 ? int64_t{c.pp} * c.interleave : 1;
}

// As stage_schedule counts stage 0's warm-up, the longest.
int64_t steady_periods(const ParallelConfig& c, int64_t microbatches) {
  const int64_t p = c.pp, v = c.interleave, total = microbatches * v;
  int64_t warmup = 0;
  if (v == 1)
    warmup = std::min<int64_t>(p - 1, microbatches);
  else if (microbatches == p)
    return 0;  // every forward first: no steady state
  else
    warmup = std::min<int64_t>((p - 1) * 2 + (v - 1) * p, total);
  return std::max<int64_t>((total - warmup) / period_group(c) - 2, 0);
}

MicrobatchPlan microbatch_plan(const ParallelConfig& c, const Layout& l) {
  MicrobatchPlan plan;
  if (deferred_head_wgrad_count(c, l.microbatches) > 0) return plan;
  const int64_t periods = steady_periods(c, l.microbatches);
  if (periods <= MicrobatchPlan::kBuiltPeriods) return plan;
  // Interleaving takes micro-batch counts that are multiples of the stages; one more group of
  // them is one more period.
  const int64_t step = microbatches_per_period(c);
  for (int64_t m = step; m < l.microbatches; m += step)
    if (steady_periods(c, m) == MicrobatchPlan::kBuiltPeriods) {
      plan.small = m;
      plan.periods = periods;
      break;
    }
  return plan;
}

// The period of the index-th task of a stage's schedule (stage_schedule: `warmup` forwards, then
// (forward, backward) pairs, then the remaining backwards): 0 for the warm-up and the first
// group of pairs, 1 to kBuiltPeriods for the next groups, kBuiltPeriods + 1 for the rest.
template <Pass P>
int Builder<P>::task_period(int64_t index, int64_t warmup, int64_t tasks) const {
  constexpr int64_t kSuffix = MicrobatchPlan::kBuiltPeriods + 1;
  if (index < warmup) return 0;
  const int64_t pair = (index - warmup) / 2;
  if (pair >= tasks / 2 - warmup) return static_cast<int>(kSuffix);
  const int64_t group = pair / period_group(c_);
  return static_cast<int>(group == 0 ? 0 : std::min(group, kSuffix));
}

namespace {

// Rows of bits: reach[i] has bit j when state entry j after the periods has a path from entry
// i before them.
using BitRows = std::vector<std::vector<uint64_t>>;

BitRows bool_product(const BitRows& a, const BitRows& b, size_t k) {
  BitRows c(k, std::vector<uint64_t>(a.empty() ? 0 : a[0].size(), 0));
  for (size_t i = 0; i < k; ++i)
    for (size_t m = 0; m < k; ++m)
      if (a[i][m / 64] >> (m % 64) & 1)
        for (size_t w = 0; w < c[i].size(); ++w) c[i][w] |= b[m][w];
  return c;
}

BitRows bool_power(BitRows a, int64_t n, size_t k) {
  const size_t words = (k + 63) / 64;
  BitRows r(k, std::vector<uint64_t>(words, 0));
  for (size_t i = 0; i < k; ++i) r[i][i / 64] |= uint64_t{1} << (i % 64);
  for (; n > 0; n >>= 1) {
    if (n & 1) r = bool_product(r, a, k);
    if (n > 1) {
      BitRows sq = bool_product(a, a, k);
      if (sq == a) {  // reachability has settled: every further power is the same
        if (n > 1) r = bool_product(r, a, k);
        break;
      }
      a = std::move(sq);
    }
  }
  return r;
}

}  // namespace

namespace {

constexpr int kSuffix = MicrobatchPlan::kBuiltPeriods + 1;
constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();

// The draft's nodes by period: in-edges by node, a topological order, each node's period and
// its place in its period (emission order).
struct Periods {
  std::vector<uint32_t> in_begin, in_edge, order, pos;
  std::vector<uint8_t> period;
  std::array<std::vector<uint32_t>, kSuffix + 1> of;
  // The state a period leaves: what the next period reads of it (and of the warm-up, which
  // stays as it is) and what the cool-down reads of the last one. Entry: (node before the
  // period, node after it), in the order the edges first read them; and each node's entry.
  std::vector<std::pair<uint32_t, uint32_t>> entries;
  std::vector<uint32_t> entry_of;
};

// A node of the third period's source, one period back: in the second period for one in the
// third, in the first for one in the second; the warm-up's, itself.
uint32_t one_period_back(const Periods& c, uint32_t v) {
  const int p = c.period[v];
  return p == 3 ? c.of[2][c.pos[v]] : p == 2 ? c.of[1][c.pos[v]] : v;
}

// Whether every node of the third period has, in emission order, the in-edges of its node in
// the second period, taken one period back.
bool same_in_edges(const graph::Draft& d, const Periods& c) {
  const auto &p2 = c.of[2], &p3 = c.of[3];
  for (size_t i = 0; i < p3.size(); ++i) {
    const uint32_t a = p3[i], b = p2[i];
    const uint32_t na = c.in_begin[a + 1] - c.in_begin[a];
    if (na != c.in_begin[b + 1] - c.in_begin[b]) return false;
    for (uint32_t k = 0; k < na; ++k) {
      const DraftEdge &x = d.edges[c.in_edge[c.in_begin[a] + k]],
                      &y = d.edges[c.in_edge[c.in_begin[b] + k]];
      if (one_period_back(c, x.src) != y.src || x.kind != y.kind || x.lag_us != y.lag_us)
        return false;
    }
  }
  return true;
}

// The draft's periods, or none when its third period is not the second one period later.
std::optional<Periods> find_periods(const graph::Draft& d,
                                    const std::vector<StepGraph::NodeMeta>& meta,
                                    const std::vector<uint8_t>& tags) {
  Periods c;
  const auto n = static_cast<uint32_t>(d.nodes.size());
  auto& in_begin = c.in_begin;
  auto& in_edge = c.in_edge;
  auto& order = c.order;
  // In-edges and out-edges by node, and a topological order.
  in_begin.assign(n + 1, 0);
  std::vector<uint32_t> out_begin(n + 1, 0);
  for (const DraftEdge& e : d.edges) ++in_begin[e.dst + 1], ++out_begin[e.src + 1];
  for (uint32_t v = 0; v < n; ++v) in_begin[v + 1] += in_begin[v], out_begin[v + 1] += out_begin[v];
  in_edge.resize(d.edges.size());
  // Successors by node (their ids: the walk below needs no more of an edge).
  std::vector<uint32_t> out_dst(d.edges.size());
  {
    std::vector<uint32_t> fi(in_begin.begin(), in_begin.end() - 1),
        fo(out_begin.begin(), out_begin.end() - 1);
    for (uint32_t e = 0; e < d.edges.size(); ++e)
      in_edge[fi[d.edges[e].dst]++] = e, out_dst[fo[d.edges[e].src]++] = d.edges[e].dst;
  }
  std::vector<uint32_t> waiting(n);
  order.reserve(n);
  for (uint32_t v = 0; v < n; ++v) {
    waiting[v] = in_begin[v + 1] - in_begin[v];
    if (waiting[v] == 0) order.push_back(v);
  }
  // A node belongs to the latest period among its task's and its predecessors', so that every
  // edge goes forward (a message's transfer waits for both sides): handed on to the successors
  // as the order reaches each node, when its own is final.
  c.period = tags;
  auto& period = c.period;
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t v = order[k];
    const uint8_t pv = period[v];
    for (uint32_t x = out_begin[v]; x < out_begin[v + 1]; ++x) {
      const uint32_t w = out_dst[x];
      if (period[w] < pv) period[w] = pv;
      if (--waiting[w] == 0) order.push_back(w);
    }
  }
  if (order.size() != n) return std::nullopt;
  auto& of = c.of;
  for (uint32_t v = 0; v < n; ++v) of[std::min<int>(period[v], kSuffix)].push_back(v);
  const auto &p1 = of[1], &p2 = of[2], &p3 = of[3];
  if (p3.empty() || p1.size() != p2.size() || p2.size() != p3.size()) return std::nullopt;
  c.pos.assign(n, kUnset);
  auto& pos = c.pos;
  for (int k = 1; k <= 3; ++k)
    for (uint32_t i = 0; i < of[static_cast<size_t>(k)].size(); ++i)
      pos[of[static_cast<size_t>(k)][i]] = i;
  for (size_t i = 0; i < p3.size(); ++i) {
    const DraftNode &x = d.nodes[p2[i]], &y = d.nodes[p3[i]];
    const StepGraph::NodeMeta &a = meta[p2[i]], &b = meta[p3[i]];
    if (x.kind != y.kind || x.cls != y.cls || x.resource != y.resource || x.step != y.step ||
        x.name != y.name || x.dur_us != y.dur_us || a.slot != b.slot || a.stream != b.stream ||
        a.stage != b.stage)
      return std::nullopt;
  }
  // The third period's in-edges, taken one period back, must be the second's; the cool-down
  // reads the last period and the warm-up only. The same walk over the edges finds the entries.
  c.entry_of.assign(n, kUnset);
  auto add = [&](uint32_t in, uint32_t out) {
    if (c.entry_of[in] != kUnset) return;
    c.entry_of[in] = static_cast<uint32_t>(c.entries.size());
    c.entries.emplace_back(in, out);
  };
  for (const DraftEdge& e : d.edges) {
    const int pd = std::min<int>(period[e.dst], kSuffix), ps = period[e.src];
    if (pd == 3 && ps != 0 && ps != 2 && ps != 3) return std::nullopt;
    if (pd == kSuffix && (ps == 1 || ps == 2)) return std::nullopt;
    if (pd == 3 && ps == 2) add(e.src, p3[pos[e.src]]);
    if (pd == 3 && ps == 0) add(e.src, e.src);
    if (pd == kSuffix && ps == 3) add(p2[pos[e.src]], e.src);
  }
  if (same_in_edges(d, c)) return c;
  // The builder emits a period's edges in the order of the one before, so the lists above
  // almost always match as they are; when not, they are compared as sets.
  using Key = std::tuple<uint32_t, uint32_t, int, double>;
  std::vector<Key> back, second;
  for (const DraftEdge& e : d.edges) {
    const int pd = std::min<int>(period[e.dst], kSuffix), ps = period[e.src];
    if (pd == 3) {
      uint32_t src = e.src;
      if (ps == 3)
        src = p2[pos[e.src]];
      else if (ps == 2)
        src = p1[pos[e.src]];
      else if (ps != 0)
        return std::nullopt;
      back.emplace_back(src, p2[pos[e.dst]], static_cast<int>(e.kind), e.lag_us);
    } else if (pd == 2) {
      second.emplace_back(e.src, e.dst, static_cast<int>(e.kind), e.lag_us);
    } else if (pd == kSuffix && (ps == 1 || ps == 2)) {
      return std::nullopt;
    }
  }
  std::sort(back.begin(), back.end());
  std::sort(second.begin(), second.end());
  if (back != second) return std::nullopt;

  return c;
}

}  // namespace

// Replaces the built periods after the second by the fold (see the top of this file). Returns
// false, leaving the draft as it is, when the third period is not the second one period later.
template <Pass P>
bool Builder<P>::fold_microbatches() {
  if constexpr (kCount) {
    return false;
  } else {
    const std::optional<Periods> found = find_periods(d_, meta_, node_period_);
    if (!found) return false;
    const auto n = static_cast<uint32_t>(d_.nodes.size());
    const auto& [in_begin, in_edge, order, pos, period, of, entries, entry_of] = *found;
    const auto& p2 = of[2];
    const auto K = static_cast<uint32_t>(entries.size());
    MicrobatchFold f;
    f.inputs = K;
    f.periods = plan_->periods - 2;  // the first two periods stay in the graph
    f.nodes.resize(K, LayerFold::Node{-1, 0, static_cast<uint8_t>(NodeClass::kVirtual)});
    std::vector<uint32_t> local(n, kUnset);
    for (uint32_t v : order)
      if (period[v] == 3) {
        local[v] = static_cast<uint32_t>(f.nodes.size());
        f.nodes.push_back(
            {meta_[v].slot, d_.nodes[v].dur_us, static_cast<uint8_t>(d_.nodes[v].cls)});
      }
    f.edge_begin.assign(1, 0);
    for (uint32_t k = 0; k < K; ++k) f.edge_begin.push_back(0);
    for (uint32_t v : order) {
      if (period[v] != 3) continue;
      for (uint32_t x = in_begin[v]; x < in_begin[v + 1]; ++x) {
        const DraftEdge& e = d_.edges[in_edge[x]];
        f.edge_src.push_back(period[e.src] == 3 ? local[e.src] : entry_of[e.src]);
        f.edge_lag_us.push_back(e.lag_us);
      }
      f.edge_begin.push_back(static_cast<uint32_t>(f.edge_src.size()));
    }
    for (uint32_t j = 0; j < K; ++j)
      f.outputs.push_back(entries[j].first == entries[j].second ? j : local[entries[j].second]);

    // Which entries after the folded periods have a path from which before them.
    // One block of rows (words per node): a row per node was a tenth of the fold in allocations.
    const size_t words = (K + 63) / 64;
    std::vector<uint64_t> from(f.nodes.size() * words, 0);
    for (uint32_t i = 0; i < K; ++i) from[i * words + i / 64] |= uint64_t{1} << (i % 64);
    for (size_t v = K; v < f.nodes.size(); ++v)
      for (uint32_t e = f.edge_begin[v]; e < f.edge_begin[v + 1]; ++e)
        for (size_t w = 0; w < words; ++w) from[v * words + w] |= from[f.edge_src[e] * words + w];
    BitRows one(K, std::vector<uint64_t>(words, 0));
    for (uint32_t j = 0; j < K; ++j)
      for (uint32_t i = 0; i < K; ++i)
        if (from[f.outputs[j] * words + i / 64] >> (i % 64) & 1)
          one[i][j / 64] |= uint64_t{1} << (j % 64);
    const BitRows reach = bool_power(one, f.periods, K);

    // The graph without the third period: its state after the folded periods is a node per
    // matrix entry some path joins, each after its entry before them. The draft is compacted in
    // place (a second copy of a graph of hundreds of thousands of nodes is mostly page faults),
    // so each entry the period changes is checked to be joined from some entry first, and its
    // stage read before the third period's nodes go.
    std::vector<int32_t> entry_stage(K);
    for (uint32_t j = 0; j < K; ++j) {
      entry_stage[j] = meta_[entries[j].second].stage;
      bool joined = entries[j].first == entries[j].second;
      for (uint32_t i = 0; i < K && !joined; ++i) joined = reach[i][j / 64] >> (j % 64) & 1;
      if (!joined) return false;
    }
    std::vector<uint32_t> id(n, kUnset);
    uint32_t kept = 0;
    for (uint32_t v = 0; v < n; ++v)
      if (period[v] != 3) id[v] = kept++;
    // Each wait's record call renumbered as its meta moves (one walk over the meta, not two).
    for (uint32_t v = 0; v < n; ++v) {
      const uint32_t to = id[v];
      if (to == kUnset) continue;
      if (to != v) {
        d_.nodes[to] = d_.nodes[v];
        meta_[to] = meta_[v];
      }
      uint32_t& record = meta_[to].record;
      if (record != kNone) record = id[record] == kUnset ? kNone : id[record];
    }
    d_.nodes.resize(kept);
    meta_.resize(kept);
    const auto fold = static_cast<uint32_t>(out_.microbatch_folds.size());
    if (fold_periods_name_ == kNone) fold_periods_name_ = intern("folded micro-batches");
    auto virtual_node = [&](int32_t stage) {
      DraftNode x;
      x.name = fold_periods_name_;
      x.step = stage;
      d_.nodes.push_back(x);
      meta_.emplace_back();
      meta_.back().stage = stage;
      return static_cast<uint32_t>(d_.nodes.size() - 1);
    };
    std::vector<DraftEdge> fold_edges;  // into and out of the nodes per entry
    std::vector<uint32_t> after(K, kUnset);
    for (uint32_t j = 0; j < K; ++j) {
      const auto [in_j, out_j] = entries[j];
      if (in_j == out_j) {  // the warm-up's node, read as it is
        after[j] = id[in_j];
        continue;
      }
      const int32_t stage = entry_stage[j];
      std::vector<uint32_t> ends;
      for (uint32_t i = 0; i < K; ++i) {
        if (!(reach[i][j / 64] >> (j % 64) & 1)) continue;
        const uint32_t x = virtual_node(stage);
        meta_[x].slot = slot_id(
            {ModelSlot::Source::kFoldedPeriods, fold, static_cast<double>(uint64_t{i} * K + j)},
            NodeClass::kVirtual);
        fold_edges.push_back({id[entries[i].first], x, EdgeKind::kInterStream, 0});
        ends.push_back(x);
      }
      if (ends.size() == 1) {
        after[j] = ends[0];
      } else {
        after[j] = virtual_node(stage);
        for (uint32_t x : ends) fold_edges.push_back({x, after[j], EdgeKind::kInterStream, 0});
      }
    }
    // The kept edges, compacted in place, then the fold's (the order of a node's in-edges is
    // flatten's to fix: the graph is the same).
    size_t e_kept = 0;
    for (const DraftEdge& e : d_.edges) {
      if (period[e.dst] == 3) continue;
      const uint32_t src = period[e.src] == 3 ? after[entry_of[p2[pos[e.src]]]] : id[e.src];
      d_.edges[e_kept++] = {src, id[e.dst], e.kind, e.lag_us};
    }
    d_.edges.resize(e_kept);
    d_.edges.insert(d_.edges.end(), fold_edges.begin(), fold_edges.end());
    for (uint32_t& e : stage_end_) e = id[e];
    for (graph::Step& st : steps_) st.marker = id[st.marker];
    // The folded periods' kernels, beyond the one built period they replace.
    const auto more = static_cast<uint64_t>(plan_->periods - MicrobatchPlan::kBuiltPeriods);
    for (size_t k = 0; k < period_compute_total_.size(); ++k)
      out_.compute_kernels[k] += more * period_compute_total_[k];
    for (size_t k = 0; k < period_gpu_total_.size(); ++k)
      out_.gpu_kernels[k] += more * period_gpu_total_[k];
    f.period_compute_kernels = period_compute_total_;
    f.period_gpu_kernels = period_gpu_total_;
    out_.microbatch_folds.push_back(std::move(f));
    return true;
  }
}

template bool Builder<Pass::kBuild>::fold_microbatches();
template bool Builder<Pass::kCount>::fold_microbatches();
template int Builder<Pass::kBuild>::task_period(int64_t, int64_t, int64_t) const;
template int Builder<Pass::kCount>::task_period(int64_t, int64_t, int64_t) const;

namespace {

// Max-plus products of K x K matrices, row-major.
using Matrix = std::vector<double>;
constexpr double kNoPath = -std::numeric_limits<double>::infinity();

Matrix max_plus(const Matrix& a, const Matrix& b, size_t k) {
  Matrix c(k * k, kNoPath);
  for (size_t i = 0; i < k; ++i)
    for (size_t m = 0; m < k; ++m) {
      const double aim = a[i * k + m];
      if (aim == kNoPath) continue;
      const double* bm = &b[m * k];
      double* ci = &c[i * k];
      for (size_t j = 0; j < k; ++j) ci[j] = std::max(ci[j], aim + bm[j]);
    }
  return c;
}

// The period replayed from kLanes state entries at once, entry first + l alone at 0 in lane l
// (lanes past the last entry replay from none): each lane as replay_fold_graph from its entry,
// the same operations in the same order, with the walk over nodes and edges shared. One entry at
// a time, a search's periods of tens of thousands of nodes were replayed a hundred times each.
constexpr size_t kLanes = 8;

void replay_period_lanes(const MicrobatchFold& f, size_t first, const ClassSpeeds& speed,
                         const std::vector<double>& slot_us, std::vector<double>* finish) {
  const size_t n = f.nodes.size();
  finish->assign(n * kLanes, kNoPath);
  double* fin = finish->data();
  for (size_t l = 0; l < kLanes && first + l < f.inputs; ++l) fin[(first + l) * kLanes + l] = 0;
  for (size_t v = f.inputs; v < n; ++v) {
    std::array<double, kLanes> start;
    start.fill(kNoPath);
    for (uint32_t e = f.edge_begin[v]; e < f.edge_begin[v + 1]; ++e) {
      const double* src = fin + size_t{f.edge_src[e]} * kLanes;
      const double lag = f.edge_lag_us[e];
      for (size_t l = 0; l < kLanes; ++l) start[l] = std::max(start[l], src[l] + lag);
    }
    const LayerFold::Node& node = f.nodes[v];
    const double dur = node.slot >= 0 ? slot_us[static_cast<size_t>(node.slot)]
                                      : node.dur_us * (1.0 / static_cast<double>(speed[node.cls]));
    double* out = fin + v * kLanes;
    for (size_t l = 0; l < kLanes; ++l) out[l] = start[l] == kNoPath ? kNoPath : start[l] + dur;
  }
}

}  // namespace

void microbatch_fold_durations(const StepGraph& g, const ClassSpeeds& speed,
                               std::vector<double>* slot_us) {
  if (g.microbatch_folds.empty()) return;
  std::vector<Matrix> run(g.microbatch_folds.size());
  std::vector<double> finish;
  for (size_t fi = 0; fi < g.microbatch_folds.size(); ++fi) {
    const MicrobatchFold& f = g.microbatch_folds[fi];
    const size_t k = f.inputs;
    Matrix one(k * k, kNoPath);
    for (size_t i0 = 0; i0 < k; i0 += kLanes) {
      // The period replayed from each state entry alone, kLanes entries at a time.
      replay_period_lanes(f, i0, speed, *slot_us, &finish);
      for (size_t l = 0; l < kLanes && i0 + l < k; ++l)
        for (size_t j = 0; j < k; ++j) one[(i0 + l) * k + j] = finish[f.outputs[j] * kLanes + l];
    }
    Matrix r(k * k, kNoPath);
    for (size_t i = 0; i < k; ++i) r[i * k + i] = 0;
    for (int64_t n = f.periods; n > 0; n >>= 1) {
      if (n & 1) r = max_plus(r, one, k);
      if (n > 1) one = max_plus(one, one, k);
    }
    run[fi] = std::move(r);
  }
  for (size_t s = 0; s < g.slots.size(); ++s)
    if (g.slots[s].source == ModelSlot::Source::kFoldedPeriods)
      (*slot_us)[s] = run[g.slots[s].index][static_cast<size_t>(g.slots[s].params)];
}

}  // namespace detail

int64_t microbatches_per_period(const ParallelConfig& c) {
  return c.interleave > 1 ? c.pp : 1;
}

bool folds_microbatches(const ParallelConfig& c, int64_t microbatches) {
  // Deferred output-layer weight gradients make the first micro-batches differ from the rest.
  return deferred_head_wgrad_count(c, microbatches) == 0 &&
         detail::steady_periods(c, microbatches) > detail::MicrobatchPlan::kBuiltPeriods;
}

}  // namespace lumos::model
