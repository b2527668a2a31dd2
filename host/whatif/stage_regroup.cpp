#include "whatif/stage_regroup.hpp"

#include <algorithm>
#include <map>

#include "common/format.hpp"
#include "graph/flatten.hpp"
#include "model/pipeline_schedule.hpp"

namespace lumos::whatif {

using graph::EdgeKind;
using graph::Graph;
using graph::NodeId;
using graph::NodeKind;

namespace {

constexpr uint32_t kUnset = UINT32_MAX;

bool is_cpu(NodeKind k) {
  return k == NodeKind::kCpuOp || k == NodeKind::kRuntime || k == NodeKind::kSync ||
         k == NodeKind::kStepMarker;
}
bool is_chain(EdgeKind k) {
  return k == EdgeKind::kIntraThread || k == EdgeKind::kIntraStream;
}

NodeId launch_of(const Graph& g, NodeId v) {
  for (uint32_t k = g.pred_offset[v]; k < g.pred_offset[v + 1]; ++k)
    if (g.pred_kind[k] == EdgeKind::kLaunch) return g.pred_index[k];
  return graph::kOrigin;
}

double median(std::vector<double> x, double none) {
  if (x.empty()) return none;
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(x.size() / 2), x.end());
  return x[x.size() / 2];
}

// The pieces of the traced iteration, in the traced order: the step's start, then per
// micro-batch the embedding's forward, each forward layer instance, the head (forward, loss and
// backward), each backward layer instance, the embedding's backward; then the step's end.
enum class Part : uint8_t { kPre, kEmbedFwd, kLayerFwd, kHead, kLayerBwd, kEmbedBwd, kPost };
struct Piece {
  Part part;
  int64_t mb;
  uint32_t instance;
  uint32_t first_kernel;  // position on the compute stream where it starts
};

// The longest common tail of two name sequences: the embedding's forward kernels end both the
// step's start and the gap between one micro-batch's backward and the next one's forward.
uint32_t common_tail(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  uint32_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

struct Cut {
  std::vector<Piece> pieces;
  std::vector<uint32_t> of;  // per traced node: its piece
  std::string why_not;
};

Cut cut_pieces(const Graph& g, const std::vector<LayerStretch>& st, int64_t mbs) {
  Cut c;
  const uint32_t cres = g.resource[st[0].kernels[0]];
  std::vector<NodeId> seq;
  for (NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.kind[v] == NodeKind::kKernel && g.resource[v] == cres) seq.push_back(v);
  std::stable_sort(seq.begin(), seq.end(), [&](NodeId x, NodeId y) {
    return g.measured_start_us[x] < g.measured_start_us[y];
  });
  std::map<NodeId, uint32_t> pos;
  for (uint32_t i = 0; i < seq.size(); ++i) pos[seq[i]] = i;
  auto first = [&](const LayerStretch& s) { return pos.at(s.kernels.front()); };
  auto end = [&](const LayerStretch& s) { return pos.at(s.kernels.back()) + 1; };
  auto names = [&](uint32_t a, uint32_t b) {
    std::vector<uint32_t> n;
    for (uint32_t i = a; i < b; ++i) n.push_back(g.name[seq[i]]);
    return n;
  };
  const uint32_t gap = mbs > 1 ? first(st[2]) - end(st[1]) : 0;
  const uint32_t ef =
      mbs > 1 ? std::min(gap, common_tail(names(0, first(st[0])), names(end(st[1]), first(st[2]))))
              : 0;
  const uint32_t eb = gap - ef;
  c.pieces.push_back({Part::kPre, 0, 0, 0});
  for (int64_t k = 0; k < mbs; ++k) {
    const LayerStretch& f = st[static_cast<size_t>(2 * k)];
    const LayerStretch& b = st[static_cast<size_t>(2 * k + 1)];
    c.pieces.push_back({Part::kEmbedFwd, k, 0, first(f) - ef});
    for (uint32_t i = 0; i < f.instances; ++i)
      c.pieces.push_back({Part::kLayerFwd, k, i, first(f) + i * f.period});
    c.pieces.push_back({Part::kHead, k, 0, end(f)});
    for (uint32_t i = 0; i < b.instances; ++i)
      c.pieces.push_back({Part::kLayerBwd, k, i, first(b) + i * b.period});
    c.pieces.push_back({Part::kEmbedBwd, k, 0, end(b)});
  }
  c.pieces.push_back({Part::kPost, 0, 0, end(st.back()) + eb});
  // Where each piece starts on the CPU (its first kernel's launch) and on the GPU.
  std::vector<double> cpu_at, gpu_at;
  for (size_t p = 1; p < c.pieces.size(); ++p) {
    const uint32_t k = c.pieces[p].first_kernel;
    if (k >= seq.size() || k < c.pieces[p - 1].first_kernel) {
      c.why_not = "the traced passes do not split into embedding, layers and head";
      return c;
    }
    const NodeId l = launch_of(g, seq[k]);
    if (l == graph::kOrigin) {
      c.why_not = "a traced kernel has no launch on the CPU";
      return c;
    }
    cpu_at.push_back(g.measured_start_us[l]);
    gpu_at.push_back(g.measured_start_us[seq[k]]);
  }
  auto piece_at = [](const std::vector<double>& at, double t) {
    return static_cast<uint32_t>(std::upper_bound(at.begin(), at.end(), t) - at.begin());
  };
  c.of.assign(g.num_nodes(), 0);
  for (NodeId v = 1; v < g.num_nodes(); ++v) {
    const NodeKind k = g.kind[v];
    if (is_cpu(k)) {
      c.of[v] = piece_at(cpu_at, g.measured_start_us[v]);
    } else if (k == NodeKind::kVirtual) {
      uint32_t p = 0;
      for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
        p = std::max(p, c.of[g.pred_index[e]]);
      c.of[v] = p;
    } else {
      const NodeId l = launch_of(g, v);
      c.of[v] = l != graph::kOrigin ? c.of[l] : piece_at(gpu_at, g.measured_start_us[v]);
    }
  }
  return c;
}

// One stage's pieces and messages in its 1F1B order. A message is (direction, micro-batch,
// boundary): boundary b joins stage b - 1 and stage b.
struct Item {
  int32_t piece = -1;  // or a message:
  bool send = false;
  int dir = 0;
  int64_t mb = 0;
  int boundary = 0;
};

std::vector<Item> stage_items(const Cut& c, int s, int pp, int64_t mbs, uint32_t per_f,
                              uint32_t per_b) {
  std::map<std::tuple<int, int64_t, uint32_t>, int32_t> index;
  for (size_t p = 0; p < c.pieces.size(); ++p)
    index[{static_cast<int>(c.pieces[p].part), c.pieces[p].mb, c.pieces[p].instance}] =
        static_cast<int32_t>(p);
  auto piece = [&](Part part, int64_t mb, uint32_t i) {
    Item it;
    it.piece = index.at({static_cast<int>(part), mb, i});
    return it;
  };
  auto msg = [](bool send, int dir, int64_t mb, int boundary) {
    Item it;
    it.send = send, it.dir = dir, it.mb = mb, it.boundary = boundary;
    return it;
  };
  std::vector<Item> out{piece(Part::kPre, 0, 0)};
  for (const model::PipelineTask& t : model::stage_schedule(s, pp, 1, mbs)) {
    const int64_t k = t.microbatch;
    if (t.forward) {
      if (s > 0) out.push_back(msg(false, 0, k, s));
      if (s == 0) out.push_back(piece(Part::kEmbedFwd, k, 0));
      for (uint32_t i = 0; i < per_f; ++i)
        out.push_back(piece(Part::kLayerFwd, k, static_cast<uint32_t>(s) * per_f + i));
      if (s == pp - 1) out.push_back(piece(Part::kHead, k, 0));
      if (s < pp - 1) out.push_back(msg(true, 0, k, s + 1));
    } else {
      if (s < pp - 1) out.push_back(msg(false, 1, k, s + 1));
      // The backward runs the layers last to first: the last stage's come first.
      for (uint32_t i = 0; i < per_b; ++i)
        out.push_back(piece(Part::kLayerBwd, k, static_cast<uint32_t>(pp - 1 - s) * per_b + i));
      if (s == 0) out.push_back(piece(Part::kEmbedBwd, k, 0));
      if (s > 0) out.push_back(msg(true, 1, k, s));
    }
  }
  out.push_back(piece(Part::kPost, 0, 0));
  return out;
}

// The structure checks: one rank, one step, a forward and a backward stretch per micro-batch,
// each a whole number of instances per new stage.
std::string unsupported(const Graph& g, const std::vector<LayerStretch>& st,
                        const StageRegroupRequest& req) {
  for (const auto& r : g.resources)
    if (r.rank != g.resources.front().rank)
      return "the traced graph holds several ranks; stages are regrouped from one rank's trace";
  if (g.steps.size() != 1) return "stages are regrouped from a trace of one step";
  if (st.size() != static_cast<size_t>(2 * req.microbatches))
    return strprintf(
        "%zu traced layer runs for %lld micro-batches (a forward and a backward "
        "run each expected)",
        st.size(), static_cast<long long>(req.microbatches));
  for (size_t i = 0; i < st.size(); ++i) {
    const LayerStretch& ref = st[i % 2];
    if (st[i].period != ref.period || st[i].instances != ref.instances)
      return "the traced micro-batches' layer runs differ";
    if (st[i].instances % static_cast<uint32_t>(req.new_pp) != 0)
      return strprintf("%u traced layer instances per pass do not split over %d stages",
                       st[i].instances, req.new_pp);
  }
  return "";
}

}  // namespace

StageRegroup regroup_stages(const Graph& g, const std::vector<LayerStretch>& st,
                            const StageRegroupRequest& req, const std::string& label) {
  StageRegroup out;
  out.why_not = unsupported(g, st, req);
  if (!out.why_not.empty()) return out;
  const Cut c = cut_pieces(g, st, req.microbatches);
  if (!c.why_not.empty()) {
    out.why_not = c.why_not;
    return out;
  }
  const int pp = req.new_pp;
  const uint32_t n = g.num_nodes();
  const uint32_t R = static_cast<uint32_t>(g.resources.size());
  const uint32_t per = R + 2;  // the traced resources, a send stream, a receive stream
  const uint32_t cres = g.resource[st[0].kernels[0]];
  const NodeId first_launch = launch_of(g, st[0].kernels[0]);
  const uint32_t tres = g.resource[first_launch];
  // The pipeline calls cost what the trace's own runtime calls cost; event calls, where the
  // trace has none, its launches' cost at the cost model's ratio.
  std::vector<double> launches, events, lags;
  for (NodeId v = 1; v < n; ++v) {
    if (g.kind[v] != NodeKind::kRuntime) continue;
    const std::string& nm = g.names[g.name[v]];
    if (nm.find("Launch") != std::string::npos) launches.push_back(g.dur_us[v]);
    if (nm.find("Event") != std::string::npos) events.push_back(g.dur_us[v]);
  }
  for (uint32_t e = 0; e < g.num_edges(); ++e)
    if (g.pred_kind[e] == EdgeKind::kLaunch) lags.push_back(g.pred_lag_us[e]);
  const double launch_us = median(launches, 5),
               event_us = median(events, launch_us * req.event_per_launch);
  const double launch_lag_us = median(lags, 0);
  graph::Draft d;
  std::vector<std::string> names = g.names;
  auto name_id = [&](const std::string& s) {
    auto it = std::find(names.begin(), names.end(), s);
    if (it != names.end()) return static_cast<uint32_t>(it - names.begin());
    names.push_back(s);
    return static_cast<uint32_t>(names.size() - 1);
  };
  d.nodes.push_back(graph::DraftNode{});  // the origin
  std::vector<std::vector<NodeId>> by_piece(c.pieces.size());
  for (NodeId v = 1; v < n; ++v) by_piece[c.of[v]].push_back(v);
  const uint32_t ratio_count = static_cast<uint32_t>(req.param_ratio_by_stage.size());
  // Messages: (dir, mb, boundary) -> the two arrivals, the rendezvous and the transfer.
  struct Msg {
    uint32_t send = kUnset, recv = kUnset, meet = kUnset, xfer = kUnset;
  };
  std::map<std::tuple<int, int64_t, int>, Msg> msgs;
  auto add = [&](NodeKind kind, graph::NodeClass cls, uint32_t res, int32_t step, uint32_t name,
                 double start, double dur) {
    graph::DraftNode x;
    x.kind = kind, x.cls = cls, x.resource = res, x.step = step, x.name = name;
    x.start_us = start, x.dur_us = dur;
    d.nodes.push_back(x);
    return static_cast<uint32_t>(d.nodes.size() - 1);
  };
  auto msg_of = [&](int dir, int64_t mb, int boundary) -> Msg& {
    Msg& m = msgs[{dir, mb, boundary}];
    if (m.meet == kUnset) {
      const int to = dir == 0 ? boundary : boundary - 1;
      m.meet = add(NodeKind::kVirtual, graph::NodeClass::kVirtual, graph::kNoResource, -1,
                   name_id("rendezvous"), 0, 0);
      m.xfer =
          add(NodeKind::kKernel, graph::NodeClass::kComm, static_cast<uint32_t>(to) * per + R + 1,
              to, name_id("ncclDevKernel_SendRecv"), 0, req.p2p_us);
      d.edges.push_back({m.meet, m.xfer, EdgeKind::kCrossRank, 0});
    }
    return m;
  };
  std::vector<graph::Step> steps;
  for (int s = 0; s < pp; ++s) {
    std::vector<uint32_t> copy(n, kUnset);
    std::vector<uint32_t> frontier(per, kUnset);
    std::vector<uint32_t> waits;  // the compute stream's next work waits for these
    const uint32_t base = static_cast<uint32_t>(s) * per;
    const double ratio = ratio_count ? req.param_ratio_by_stage[std::min<uint32_t>(
                                           static_cast<uint32_t>(s), ratio_count - 1)]
                                     : 1.0;
    // Appends a node on resource r (traced numbering) after the work there so far.
    auto chain = [&](uint32_t id, uint32_t r, EdgeKind kind, double lag, bool link) {
      if (link && frontier[r] != kUnset) d.edges.push_back({frontier[r], id, kind, lag});
      if (r == cres) {
        for (uint32_t w : waits) d.edges.push_back({w, id, EdgeKind::kInterStream, 0});
        waits.clear();
      }
      frontier[r] = id;
    };
    auto call = [&](const char* name, double dur) {
      const uint32_t id =
          add(NodeKind::kRuntime, graph::NodeClass::kCpu, base + tres, s, name_id(name), 0, dur);
      chain(id, tres, EdgeKind::kIntraThread, 0, true);
      return id;
    };
    for (const Item& it :
         stage_items(c, s, pp, req.microbatches, st[0].instances / pp, st[1].instances / pp)) {
      if (it.piece < 0) {
        Msg& m = msg_of(it.dir, it.mb, it.boundary);
        const uint32_t side = it.send ? R : R + 1;
        if (it.send) call("cudaEventRecord", event_us), call("cudaStreamWaitEvent", event_us);
        const uint32_t l = call("cudaLaunchKernel", launch_us);
        const uint32_t arr =
            add(NodeKind::kKernel, graph::NodeClass::kComm, base + side, s,
                name_id(it.send ? "ncclDevKernel_Send" : "ncclDevKernel_Recv"), 0, 0);
        d.edges.push_back({l, arr, EdgeKind::kLaunch, launch_lag_us});
        if (it.send && frontier[cres] != kUnset)
          d.edges.push_back({frontier[cres], arr, EdgeKind::kInterStream, 0});
        chain(arr, side, EdgeKind::kIntraStream, 0, true);
        d.edges.push_back({arr, m.meet, EdgeKind::kCrossRank, 0});
        frontier[side] = m.xfer;
        if (!it.send || req.p2p_blocking) {
          waits.push_back(m.xfer);
          call("cudaEventRecord", event_us), call("cudaStreamWaitEvent", event_us);
        }
        out.messages += it.send ? 1 : 0;
        continue;
      }
      const Part part = c.pieces[static_cast<size_t>(it.piece)].part;
      ++out.pieces;
      for (NodeId v : by_piece[static_cast<size_t>(it.piece)]) {
        const uint32_t r = g.resource[v];
        double dur = g.dur_us[v];
        if (part == Part::kPost && !req.scales_with_params.empty() && req.scales_with_params[v] &&
            ratio != 1)
          dur *= ratio, ++out.scaled;
        const uint32_t id = add(g.kind[v], g.cls[v], r == graph::kNoResource ? r : base + r, s,
                                g.name[v], g.measured_start_us[v], dur);
        d.nodes[id].event = g.event[v];
        copy[v] = id;
        bool chained = false;
        double chain_lag = 0;
        for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
          const NodeId p = g.pred_index[e];
          const EdgeKind kind = g.pred_kind[e];
          if (p == graph::kOrigin) {
            // A time from the traced t0 holds only where the copy keeps its traced time.
            if (part == Part::kPre) d.edges.push_back({0, id, kind, g.pred_lag_us[e]});
            continue;
          }
          if (c.of[p] == c.of[v] && copy[p] != kUnset) {
            d.edges.push_back({copy[p], id, kind, g.pred_lag_us[e]});
            chained |= is_chain(kind);
          } else if (is_chain(kind)) {
            chain_lag = g.pred_lag_us[e];  // the work before it there, in this stage's order
          } else {
            // From another piece: its copy on this stage, else the latest work on its resource.
            uint32_t src = copy[p];
            if (src == kUnset && g.resource[p] != graph::kNoResource) src = frontier[g.resource[p]];
            if (src != kUnset) d.edges.push_back({src, id, kind, g.pred_lag_us[e]});
          }
        }
        if (r != graph::kNoResource)
          chain(id, r,
                g.resources[r].kind == graph::ResourceKind::kThread ? EdgeKind::kIntraThread
                                                                    : EdgeKind::kIntraStream,
                chain_lag, !chained);
      }
    }
    graph::Step step = g.steps.front();
    step.rank = s;
    step.marker = copy[g.steps.front().marker];
    steps.push_back(step);
    out.nodes_before = n;
  }
  // Work with nothing before it on its stage (a stage's first call) starts from the origin.
  std::vector<uint8_t> has_pred(d.nodes.size(), 0);
  for (const auto& e : d.edges) has_pred[e.dst] = 1;
  for (uint32_t x = 1; x < d.nodes.size(); ++x)
    if (!has_pred[x]) d.edges.push_back({0, x, EdgeKind::kOrigin, 0});
  std::vector<NodeId> new_id;
  out.graph = graph::flatten(
      d, &new_id, [&](uint32_t x) { return names[d.nodes[x].name]; }, label);
  for (int s = 0; s < pp; ++s) {
    for (uint32_t r = 0; r < R; ++r) {
      graph::Resource x = g.resources[r];
      x.rank = s;
      out.graph.resources.push_back(x);
    }
    const int64_t dev = g.resources[cres].a;
    out.graph.resources.push_back({graph::ResourceKind::kStream, s, dev, 1000001});
    out.graph.resources.push_back({graph::ResourceKind::kStream, s, dev, 1000002});
  }
  for (auto& step : steps)
    step.marker = step.marker == kUnset ? graph::kOrigin : new_id[step.marker];
  out.graph.names = std::move(names);
  out.graph.steps = std::move(steps);
  out.graph.t0_ns = g.t0_ns, out.graph.rank = g.rank, out.graph.source = g.source;
  out.nodes_after = out.graph.num_nodes();
  return out;
}

}  // namespace lumos::whatif
