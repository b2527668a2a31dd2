// Runs of identical layers folded (LayerFold): the builder records one layer of a run between
// placeholders for its frontier and leaves a node per entry of the layer's max-plus matrix that
// some path joins; fold_slot_durations computes each fold's matrix from its kernels' durations
// and raises it to the run's length.
#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <vector>

#include "model/step_graph_builder.hpp"

namespace lumos::model {
namespace detail {
namespace {

// The layer recorded in the draft from node n0 and edge e0 on; its first kFrontier nodes are
// the placeholders.
LayerFold record_layer(const graph::Draft& d, const std::vector<StepGraph::NodeMeta>& meta,
                       uint64_t n0, uint64_t e0,
                       const std::array<std::vector<uint32_t>, LayerFold::kFrontier>& after) {
  LayerFold f;
  const auto nodes = static_cast<uint32_t>(d.nodes.size() - n0);
  f.nodes.resize(nodes);
  for (uint32_t k = 0; k < nodes; ++k) {
    const DraftNode& dn = d.nodes[n0 + k];
    f.nodes[k] = {meta[n0 + k].slot, dn.dur_us, static_cast<uint8_t>(dn.cls)};
  }
  f.edge_begin.assign(nodes + 1, 0);
  for (uint64_t e = e0; e < d.edges.size(); ++e) {
    const DraftEdge& de = d.edges[e];
    if (de.src < n0 || de.src >= de.dst)
      throw std::logic_error("step graph: a folded layer depends on more than its frontier");
    ++f.edge_begin[de.dst - n0 + 1];
  }
  for (uint32_t k = 0; k < nodes; ++k) f.edge_begin[k + 1] += f.edge_begin[k];
  f.edge_src.resize(f.edge_begin[nodes]);
  f.edge_lag_us.resize(f.edge_begin[nodes]);
  std::vector<uint32_t> fill(f.edge_begin.begin(), f.edge_begin.end() - 1);
  for (uint64_t e = e0; e < d.edges.size(); ++e) {
    const DraftEdge& de = d.edges[e];
    const uint32_t at = fill[de.dst - n0]++;
    f.edge_src[at] = static_cast<uint32_t>(de.src - n0);
    f.edge_lag_us[at] = de.lag_us;
  }
  for (size_t j = 0; j < after.size(); ++j)
    for (uint32_t x : after[j]) f.outputs[j].push_back(static_cast<uint32_t>(x - n0));
  return f;
}

// FoldedRun::same_as of a recorded layer.
std::array<int, LayerFold::kFrontier> alike_inputs(const LayerFold& f) {
  constexpr int K = LayerFold::kFrontier;
  std::array<std::vector<std::pair<uint32_t, double>>, K> out;
  std::array<bool, K> is_output{};
  for (size_t n = K; n < f.nodes.size(); ++n)
    for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e)
      if (f.edge_src[e] < K)
        out[f.edge_src[e]].emplace_back(static_cast<uint32_t>(n), f.edge_lag_us[e]);
  for (const auto& list : f.outputs)
    for (uint32_t o : list)
      if (o < K) is_output[o] = true;
  std::array<int, K> same{0, 1, 2, 3, 4};
  for (int i = 0; i < K; ++i) {
    std::sort(out[static_cast<size_t>(i)].begin(), out[static_cast<size_t>(i)].end());
    if (is_output[static_cast<size_t>(i)] || out[static_cast<size_t>(i)].empty()) continue;
    for (int k = 0; k < i; ++k)
      if (same[static_cast<size_t>(k)] == k && !is_output[static_cast<size_t>(k)] &&
          out[static_cast<size_t>(k)] == out[static_cast<size_t>(i)]) {
        same[static_cast<size_t>(i)] = k;
        break;
      }
  }
  return same;
}

// Which frontier entries after f.layers layers have a path from which entries before them.
std::array<std::array<bool, LayerFold::kFrontier>, LayerFold::kFrontier> run_reach(
    const LayerFold& f) {
  constexpr int K = LayerFold::kFrontier;
  using Reach = std::array<std::array<bool, K>, K>;
  // Said outright so that GCC, inlining this into record_run, sees no write past an empty list.
  if (f.nodes.size() < K) throw std::logic_error("step graph: a folded layer without its frontier");
  std::vector<uint8_t> from(f.nodes.size(), 0);  // bit i: a path from frontier entry i
  for (int i = 0; i < K; ++i) from[static_cast<size_t>(i)] = static_cast<uint8_t>(1 << i);
  for (size_t n = K; n < f.nodes.size(); ++n)
    for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e) from[n] |= from[f.edge_src[e]];
  Reach one{}, run{};
  for (int j = 0; j < K; ++j)
    for (uint32_t o : f.outputs[static_cast<size_t>(j)])
      for (int i = 0; i < K; ++i)
        if (from[o] >> i & 1) one[static_cast<size_t>(i)][static_cast<size_t>(j)] = true;
  run = one;
  for (int64_t l = 1; l < f.layers; ++l) {
    Reach next{};
    for (int i = 0; i < K; ++i)
      for (int m = 0; m < K; ++m)
        if (run[static_cast<size_t>(i)][static_cast<size_t>(m)])
          for (int j = 0; j < K; ++j)
            next[static_cast<size_t>(i)][static_cast<size_t>(j)] =
                next[static_cast<size_t>(i)][static_cast<size_t>(j)] ||
                one[static_cast<size_t>(m)][static_cast<size_t>(j)];
    if (next == run) break;  // reachability settles within K layers
    run = next;
  }
  return run;
}

}  // namespace

// `count` layers, each emitted by emit_layer, one after another with nothing else between them:
// with folding, one LayerFold and a node per entry of its matrix that some path joins. A layer
// depends on nothing but its frontier and `kind` (which ops, in which pass), so each kind and
// length is recorded once: between placeholders for the frontier, then cut out of the draft.
template <Pass P>
void Builder<P>::layer_run(int s, LayerKind kind, int64_t count) {
  Stage& st = stages_[static_cast<size_t>(s)];
  if (!fold_ || count < 2 || st.last_cpu == kNone) {
    for (int64_t i = 0; i < count; ++i) emit_layer(s, kind);
    return;
  }
  // Launches split into two groups start when they would in one (see launch_call), so the
  // run's first launch may start a group of its own.
  close_launches(s);
  constexpr int K = LayerFold::kFrontier;
  constexpr int kRoles[2] = {kComputeStream, kTpStream};
  auto& in = run_in_;
  for (auto& list : in) list.clear();
  in[0].push_back(st.last_cpu);
  for (int r = 0; r < 2; ++r) {
    const uint32_t last = st.last_gpu[static_cast<size_t>(kRoles[r])];
    if (last != kNone) in[static_cast<size_t>(1 + r)].push_back(last);
    in[static_cast<size_t>(3 + r)] = st.pending[static_cast<size_t>(kRoles[r])];
  }
  auto [known, fresh] = runs_.try_emplace({kind, count});
  FoldedRun& run = known->second;
  if (fresh) run = record_run(s, kind, count);
  for (const auto& [slot, layer_kernels] : run.compute_kernels)
    out_.compute_kernels[slot] += layer_kernels * static_cast<uint64_t>(count);
  for (const auto& [slot, layer_kernels] : run.gpu_kernels)
    out_.gpu_kernels[slot] += layer_kernels * static_cast<uint64_t>(count);
  const auto& reach = run.reach;
  const int32_t fold = run.fold;
  // Inputs the layer reads alike give one entry per output, after the latest of them.
  auto& joined = run_joined_;
  for (auto& list : joined) list.clear();
  for (int i = 0; i < K; ++i)
    for (uint32_t x : in[static_cast<size_t>(i)])
      joined[static_cast<size_t>(run.same_as[static_cast<size_t>(i)])].push_back(x);
  auto& entry = run_entry_;
  for (auto& list : entry) list.clear();
  for (int j = 0; j < K; ++j) {
    if (run.untouched[static_cast<size_t>(j)]) {  // the layer neither reads nor changes it
      entry[static_cast<size_t>(j)] = in[static_cast<size_t>(j)];
      continue;
    }
    for (int i = 0; i < K; ++i) {
      if (joined[static_cast<size_t>(i)].empty() ||
          !reach[static_cast<size_t>(i)][static_cast<size_t>(j)])
        continue;
      const uint32_t n =
          node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, s, fold_name(), 0);
      meta(n).slot = slot_id(
          {ModelSlot::Source::kFolded, static_cast<uint32_t>(fold), static_cast<double>(i * K + j)},
          NodeClass::kVirtual);
      for (uint32_t x : joined[static_cast<size_t>(i)]) edge(x, n, EdgeKind::kInterStream, 0);
      entry[static_cast<size_t>(j)].push_back(n);
    }
  }
  if (entry[0].empty()) throw std::logic_error("step graph: a folded run without a thread");
  st.last_cpu =
      join(entry[0], NodeKind::kRuntime, NodeClass::kCpu, st.thread, s, EdgeKind::kIntraThread);
  st.cpu_plain = false;
  for (int r = 0; r < 2; ++r) {
    const auto role = static_cast<size_t>(kRoles[r]);
    const auto& ends = entry[static_cast<size_t>(1 + r)];
    st.last_gpu[role] = ends.empty() ? kNone
                                     : join(ends, NodeKind::kKernel,
                                            r == 0 ? NodeClass::kCompute : NodeClass::kComm,
                                            st.stream[role], s, EdgeKind::kIntraStream);
    if (ends.size() > 1) meta(st.last_gpu[role]).stream = static_cast<int8_t>(kRoles[r]);
    st.pending[role] = entry[static_cast<size_t>(3 + r)];
  }
}

// The ops of one layer of `kind`.
template <Pass P>
void Builder<P>::emit_layer(int s, LayerKind kind) {
  if (kind == kBackwardLayer) {
    kernels(s, k_.layer_recompute);
    kernels(s, k_.layer_bwd);
  } else {
    kernels(s, k_.layer_fwd, kind == kFirstForwardLayer);
  }
}

// The run's layer, recorded in the draft between placeholders for the frontier and cut out
// again (FoldedRun).
template <Pass P>
FoldedRun Builder<P>::record_run(int s, LayerKind kind, int64_t count) {
  constexpr int K = LayerFold::kFrontier;
  constexpr int kRoles[2] = {kComputeStream, kTpStream};
  Stage& st = stages_[static_cast<size_t>(s)];
  const std::array<uint32_t, 3> frontier = {st.last_cpu, st.last_gpu[kComputeStream],
                                            st.last_gpu[kTpStream]};
  const std::array<std::vector<uint32_t>, 2> pending = {st.pending[kComputeStream],
                                                        st.pending[kTpStream]};
  const uint64_t n0 = node_count(), e0 = edge_count();
  const size_t comms0 = out_.comms.size();
  const auto seq0 = st.seq;
  const std::vector<uint64_t> compute0 = out_.compute_kernels, gpu0 = out_.gpu_kernels;
  const bool plain0 = st.cpu_plain;
  st.cpu_plain = false;
  std::array<uint32_t, K> placeholder{};
  for (uint32_t& ph : placeholder)
    ph = node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, s, 0, 0);
  st.last_cpu = placeholder[0];
  for (int r = 0; r < 2; ++r) {
    st.last_gpu[static_cast<size_t>(kRoles[r])] = placeholder[static_cast<size_t>(1 + r)];
    st.pending[static_cast<size_t>(kRoles[r])] = {placeholder[static_cast<size_t>(3 + r)]};
  }
  emit_layer(s, kind);
  close_launches(s);
  std::array<std::vector<uint32_t>, K> after;
  after[0] = {st.last_cpu};
  for (int r = 0; r < 2; ++r) {
    after[static_cast<size_t>(1 + r)] = {st.last_gpu[static_cast<size_t>(kRoles[r])]};
    after[static_cast<size_t>(3 + r)] = st.pending[static_cast<size_t>(kRoles[r])];
  }
  // Which frontier entries after the run have a path from which before it (a counting pass,
  // which keeps no edges, assumes all).
  FoldedRun run;
  for (int j = 0; j < K; ++j)
    run.untouched[static_cast<size_t>(j)] =
        after[static_cast<size_t>(j)] == std::vector<uint32_t>{placeholder[static_cast<size_t>(j)]};
  if constexpr (kCount) {
    for (auto& row : run.reach) row.fill(true);
    count_.layer_nodes = std::max(count_.layer_nodes, count_.nodes - n0);
    count_.layer_edges = std::max(count_.layer_edges, count_.edges - e0);
    count_.nodes = n0;
    count_.edges = e0;
  } else {
    LayerFold f = record_layer(d_, meta_, n0, e0, after);
    f.layers = count;
    run.reach = run_reach(f);
    run.same_as = alike_inputs(f);
    run.fold = static_cast<int32_t>(out_.folds.size());
    out_.folds.push_back(std::move(f));
    d_.nodes.resize(n0);
    d_.edges.resize(e0);
    meta_.resize(n0);
    if (plan_) node_period_.resize(n0);
    out_.comms.resize(comms0);
    // The layer's kernels, counted by the caller for the whole run.
    auto take_layer = [](std::vector<uint64_t>& counts, const std::vector<uint64_t>& before,
                         std::vector<std::pair<size_t, uint64_t>>* per_layer) {
      for (size_t k = 0; k < counts.size(); ++k) {
        const uint64_t b = k < before.size() ? before[k] : 0;
        if (counts[k] > b) per_layer->emplace_back(k, counts[k] - b);
        counts[k] = b;
      }
    };
    take_layer(out_.compute_kernels, compute0, &run.compute_kernels);
    take_layer(out_.gpu_kernels, gpu0, &run.gpu_kernels);
  }
  st.seq = seq0;
  st.last_cpu = frontier[0];
  st.cpu_plain = plain0;
  for (int r = 0; r < 2; ++r) {
    st.last_gpu[static_cast<size_t>(kRoles[r])] = frontier[static_cast<size_t>(1 + r)];
    st.pending[static_cast<size_t>(kRoles[r])] = pending[static_cast<size_t>(r)];
  }
  return run;
}

void replay_fold_graph(const std::vector<LayerFold::Node>& nodes,
                       const std::vector<uint32_t>& edge_begin,
                       const std::vector<uint32_t>& edge_src,
                       const std::vector<double>& edge_lag_us, size_t inputs, size_t from,
                       const ClassSpeeds& speed, const std::vector<double>& slot_us,
                       std::vector<double>* finish) {
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  finish->assign(nodes.size(), kNone);
  (*finish)[from] = 0;
  for (size_t n = inputs; n < nodes.size(); ++n) {
    double start = kNone;
    for (uint32_t e = edge_begin[n]; e < edge_begin[n + 1]; ++e)
      start = std::max(start, (*finish)[edge_src[e]] + edge_lag_us[e]);
    if (start == kNone) continue;
    const LayerFold::Node& node = nodes[n];
    (*finish)[n] =
        start + (node.slot >= 0 ? slot_us[static_cast<size_t>(node.slot)]
                                : node.dur_us * (1.0 / static_cast<double>(speed[node.cls])));
  }
}

template <Pass P>
uint32_t Builder<P>::fold_name() {
  if (fold_name_ == kNone) fold_name_ = intern("folded layers");
  return fold_name_;
}

// A node on `res` that ends when the latest of `preds` does (the one predecessor itself).
template <Pass P>
uint32_t Builder<P>::join(const std::vector<uint32_t>& preds, NodeKind kind, NodeClass cls,
                          uint32_t res, int s, EdgeKind ek) {
  if (preds.size() == 1) return preds.front();
  const uint32_t n = node(kind, cls, res, s, fold_name(), 0);
  for (uint32_t p : preds) edge(p, n, ek, 0);
  return n;
}

// Called from the other files of the builder.
template void Builder<Pass::kBuild>::layer_run(int, LayerKind, int64_t);
template void Builder<Pass::kCount>::layer_run(int, LayerKind, int64_t);

}  // namespace detail

namespace {

constexpr int kK = LayerFold::kFrontier;
using FoldMatrix = std::array<std::array<double, kK>, kK>;
constexpr double kNoPath = -std::numeric_limits<double>::infinity();

// Max-plus product: (a b)[i][j] = max over m of a[i][m] + b[m][j].
FoldMatrix max_plus(const FoldMatrix& a, const FoldMatrix& b) {
  FoldMatrix c;
  for (int i = 0; i < kK; ++i)
    for (int j = 0; j < kK; ++j) {
      double best = kNoPath;
      for (int m = 0; m < kK; ++m) best = std::max(best, a[i][m] + b[m][j]);
      c[i][j] = best;
    }
  return c;
}

FoldMatrix max_plus_power(FoldMatrix a, int64_t n) {
  FoldMatrix r;
  for (int i = 0; i < kK; ++i)
    for (int j = 0; j < kK; ++j) r[i][j] = i == j ? 0.0 : kNoPath;
  for (; n > 0; n >>= 1) {
    if (n & 1) r = max_plus(r, a);
    if (n > 1) a = max_plus(a, a);
  }
  return r;
}

void layer_fold_durations(const StepGraph& g, const ClassSpeeds& speed,
                          std::vector<double>* slot_us) {
  if (g.folds.empty()) return;
  std::vector<FoldMatrix> run(g.folds.size());
  std::vector<double> finish;
  for (size_t fi = 0; fi < g.folds.size(); ++fi) {
    const LayerFold& f = g.folds[fi];
    FoldMatrix one;
    for (int i = 0; i < kK; ++i) {
      // The layer replayed from frontier entry i alone (as the replay: start at the latest
      // predecessor's finish plus the edge's lag).
      detail::replay_fold_graph(f.nodes, f.edge_begin, f.edge_src, f.edge_lag_us, kK,
                                static_cast<size_t>(i), speed, *slot_us, &finish);
      for (int j = 0; j < kK; ++j) {
        double latest = kNoPath;
        for (uint32_t o : f.outputs[static_cast<size_t>(j)]) latest = std::max(latest, finish[o]);
        one[i][j] = latest;
      }
    }
    run[fi] = max_plus_power(one, f.layers);
  }
  for (size_t s = 0; s < g.slots.size(); ++s)
    if (g.slots[s].source == ModelSlot::Source::kFolded) {
      const auto entry = static_cast<int>(g.slots[s].params);
      (*slot_us)[s] =
          run[g.slots[s].index][static_cast<size_t>(entry / kK)][static_cast<size_t>(entry % kK)];
    }
}

}  // namespace

void fold_slot_durations(const StepGraph& g, const ClassSpeeds& speed,
                         std::vector<double>* slot_us) {
  layer_fold_durations(g, speed, slot_us);
  // A folded period's nodes include folded layers.
  detail::microbatch_fold_durations(g, speed, slot_us);
}

}  // namespace lumos::model
