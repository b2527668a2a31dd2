#include "whatif/stage_regroup.hpp"

#include <algorithm>
#include <map>
#include <tuple>

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

// The pieces of a traced stage's iteration: the step's start; per task of its schedule, the
// embedding's forward (first stage), each layer instance, the head (forward, loss and backward;
// last stage), the embedding's backward (first stage); the step's end.
enum class Part : uint8_t { kPre, kEmbedFwd, kLayerFwd, kHead, kLayerBwd, kEmbedBwd, kPost };
struct Piece {
  Part part;
  int32_t rank;
  int64_t mb;
  uint32_t instance;
  uint32_t first_kernel;  // position on the rank's compute stream where it starts
};
using PieceKey = std::tuple<int, int32_t, int64_t, uint32_t>;

// The longest common tail of two name sequences: the embedding's forward kernels end both the
// step's start and the gap between one micro-batch's backward and the next one's forward.
uint32_t common_tail(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  uint32_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

struct Cut {
  std::vector<Piece> pieces;
  std::map<PieceKey, int32_t> index;
  std::vector<uint32_t> of;  // per traced node: its piece, kUnset for a dropped message
  std::string why_not;
};

// The pieces of traced stage t (its stretches `st` in its schedule's order); their CPU and GPU
// start times appended to cpu_at / gpu_at.
bool cut_rank(const Graph& g, int32_t t, int pp, int64_t mbs, const std::vector<LayerStretch>& st,
              Cut& c, std::vector<double>& cpu_at, std::vector<double>& gpu_at) {
  const uint32_t cres = g.resource[st[0].kernels[0]];
  std::vector<NodeId> seq;
  for (NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.kind[v] == NodeKind::kKernel && g.resource[v] == cres) seq.push_back(v);
  std::stable_sort(seq.begin(), seq.end(), [&](NodeId x, NodeId y) {
    return g.measured_start_us[x] < g.measured_start_us[y];
  });
  std::map<NodeId, uint32_t> pos;
  for (uint32_t i = 0; i < seq.size(); ++i) pos[seq[i]] = i;
  auto first = [&](size_t i) { return pos.at(st[i].kernels.front()); };
  auto end = [&](size_t i) { return pos.at(st[i].kernels.back()) + 1; };
  auto names = [&](uint32_t a, uint32_t b) {
    std::vector<uint32_t> n;
    for (uint32_t i = a; i < b && i < seq.size(); ++i) n.push_back(g.name[seq[i]]);
    return n;
  };
  const auto tasks = model::stage_schedule(t, pp, 1, mbs);
  // The first stage's embedding kernels: forward ones before a forward pass's layers, backward
  // ones after a backward pass's; one stage alone has both in each gap between micro-batches.
  uint32_t ef = 0, eb = 0;
  if (t == 0 && mbs > 1) {
    if (pp == 1) {
      const uint32_t gap = first(2) - end(1);
      ef = std::min(gap, common_tail(names(0, first(0)), names(end(1), first(2))));
      eb = gap - ef;
    } else {
      ef = first(1) - end(0);  // the warm-up's first two forwards
      eb = seq.size() > 0 ? first(st.size() - 1) - end(st.size() - 2) : 0;  // the cool-down's
    }
  }
  auto add = [&](Part part, int64_t mb, uint32_t i, uint32_t k) {
    c.index[{static_cast<int>(part), t, mb, i}] = static_cast<int32_t>(c.pieces.size());
    c.pieces.push_back({part, t, mb, i, k});
  };
  const size_t from = c.pieces.size();
  add(Part::kPre, 0, 0, 0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const LayerStretch& s = st[i];
    const int64_t k = tasks[i].microbatch;
    if (tasks[i].forward && t == 0) add(Part::kEmbedFwd, k, 0, first(i) - ef);
    for (uint32_t j = 0; j < s.instances; ++j)
      add(tasks[i].forward ? Part::kLayerFwd : Part::kLayerBwd, k, j, first(i) + j * s.period);
    if (tasks[i].forward && t == pp - 1) add(Part::kHead, k, 0, end(i));
    if (!tasks[i].forward && t == 0) add(Part::kEmbedBwd, k, 0, end(i));
  }
  add(Part::kPost, 0, 0, end(st.size() - 1) + eb);
  for (size_t p = from + 1; p < c.pieces.size(); ++p) {
    const uint32_t k = c.pieces[p].first_kernel;
    if (k >= seq.size() || k < c.pieces[p - 1].first_kernel) {
      c.why_not = "the traced passes do not split into embedding, layers and head";
      return false;
    }
    const NodeId l = launch_of(g, seq[k]);
    if (l == graph::kOrigin) {
      c.why_not = "a traced kernel has no launch on the CPU";
      return false;
    }
    cpu_at.push_back(g.measured_start_us[l]);
    gpu_at.push_back(g.measured_start_us[seq[k]]);
  }
  return true;
}

// The traced pipeline messages, dropped (the regroup inserts its own): the kernels of the
// pipeline groups and everything on their streams, their launches, the event calls next to
// those on the thread, and the rendezvous they meet at.
std::vector<uint8_t> pipeline_messages(const Graph& g, const std::vector<uint8_t>& pipeline) {
  const uint32_t n = g.num_nodes();
  std::vector<uint8_t> drop(n, 0), stream(g.resources.size(), 0);
  for (NodeId v = 1; v < n && !pipeline.empty(); ++v)
    if (pipeline[v] && g.resource[v] != graph::kNoResource) stream[g.resource[v]] = 1;
  std::map<uint32_t, std::vector<NodeId>> threads;
  for (NodeId v = 1; v < n; ++v) {
    if (g.resource[v] != graph::kNoResource && stream[g.resource[v]]) {
      drop[v] = 1;
      const NodeId l = launch_of(g, v);
      if (l != graph::kOrigin) drop[l] = 1;
    }
  }
  for (NodeId v = 1; v < n; ++v) {
    if (g.kind[v] == NodeKind::kVirtual && g.pred_offset[v + 1] > g.pred_offset[v]) {
      bool all = true;
      for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
        all &= drop[g.pred_index[e]] != 0;
      drop[v] = all;
    }
    if (is_cpu(g.kind[v]) && g.resource[v] != graph::kNoResource)
      threads[g.resource[v]].push_back(v);
  }
  auto is_event = [&](NodeId v) {
    return g.kind[v] == NodeKind::kRuntime && g.names[g.name[v]].find("Event") != std::string::npos;
  };
  for (auto& [res, on] : threads) {
    std::stable_sort(on.begin(), on.end(), [&](NodeId x, NodeId y) {
      return g.measured_start_us[x] < g.measured_start_us[y];
    });
    for (size_t i = 0; i < on.size(); ++i) {
      if (!drop[on[i]] || is_event(on[i])) continue;
      for (size_t j = i + 1; j < on.size() && is_event(on[j]); ++j) drop[on[j]] = 1;
      for (size_t j = i; j-- > 0 && is_event(on[j]);) drop[on[j]] = 1;
    }
  }
  return drop;
}

Cut cut_pieces(const Graph& g, const std::map<int32_t, std::vector<LayerStretch>>& by_rank, int pp,
               int64_t mbs, const std::vector<uint8_t>& drop) {
  Cut c;
  std::map<int32_t, std::pair<std::vector<double>, std::vector<double>>> at;  // cpu, gpu
  std::map<int32_t, size_t> first_piece;
  for (const auto& [rank, st] : by_rank) {
    first_piece[rank] = c.pieces.size();
    auto& [cpu, gpu] = at[rank];
    if (!cut_rank(g, rank, pp, mbs, st, c, cpu, gpu)) return c;
  }
  auto piece_at = [](const std::vector<double>& v, double t) {
    return static_cast<uint32_t>(std::upper_bound(v.begin(), v.end(), t) - v.begin());
  };
  c.of.assign(g.num_nodes(), kUnset);
  for (NodeId v = 1; v < g.num_nodes(); ++v) {
    if (drop[v]) continue;
    const NodeKind k = g.kind[v];
    if (k == NodeKind::kVirtual) {
      uint32_t p = 0;
      for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
        if (g.pred_kind[e] == EdgeKind::kCrossRank) {
          c.why_not = "collectives other than the pipeline's join the traced stages";
          return c;
        }
        const uint32_t q = c.of[g.pred_index[e]];
        if (q != kUnset) p = std::max(p, q);
      }
      c.of[v] = p;
      continue;
    }
    const int32_t rank = g.resources[g.resource[v]].rank;
    auto it = at.find(rank);
    if (it == at.end()) {
      c.why_not = strprintf("rank %d has no traced layers", rank);
      return c;
    }
    const uint32_t base = static_cast<uint32_t>(first_piece[rank]);
    const NodeId l = is_cpu(k) ? graph::kOrigin : launch_of(g, v);
    if (is_cpu(k))
      c.of[v] = base + piece_at(it->second.first, g.measured_start_us[v]);
    else if (l != graph::kOrigin && c.of[l] != kUnset)
      c.of[v] = c.of[l];
    else
      c.of[v] = base + piece_at(it->second.second, g.measured_start_us[v]);
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

// Layer instance `gi` (in forward order over the whole model) of a traced job with `per`
// instances per stage: its traced stage and its place in that stage's forward or backward run.
std::pair<int32_t, uint32_t> traced_instance(uint32_t gi, uint32_t per, bool forward) {
  const uint32_t j = gi % per;
  return {static_cast<int32_t>(gi / per), forward ? j : per - 1 - j};
}

std::vector<Item> stage_items(const Cut& c, int s, int pp, int v, int traced_pp, int64_t mbs,
                              uint32_t traced_per) {
  auto piece = [&](Part part, int32_t rank, int64_t mb, uint32_t i) {
    Item it;
    it.piece = c.index.at({static_cast<int>(part), rank, mb, i});
    return it;
  };
  auto msg = [](bool send, int dir, int64_t mb, int boundary) {
    Item it;
    it.send = send, it.dir = dir, it.mb = mb, it.boundary = boundary;
    return it;
  };
  // Instances per model chunk; virtual stage j = chunk x pp + s holds [j x per, (j + 1) x per).
  const uint32_t per =
      traced_per * static_cast<uint32_t>(traced_pp) / static_cast<uint32_t>(pp * v);
  const int last = pp * v - 1;
  // The step's start and end come from the traced stage that held the stage's first layer.
  const auto home = static_cast<int32_t>(static_cast<uint32_t>(s) * per / traced_per);
  std::vector<Item> out{piece(Part::kPre, home, 0, 0)};
  for (const model::PipelineTask& t : model::stage_schedule(s, pp, v, mbs)) {
    const int64_t k = t.microbatch;
    const int j = t.chunk * pp + s;
    const uint32_t lo = static_cast<uint32_t>(j) * per;
    if (t.forward) {
      if (j > 0) out.push_back(msg(false, 0, k, j));
      if (j == 0) out.push_back(piece(Part::kEmbedFwd, 0, k, 0));
      for (uint32_t i = 0; i < per; ++i) {
        const auto [rank, x] = traced_instance(lo + i, traced_per, true);
        out.push_back(piece(Part::kLayerFwd, rank, k, x));
      }
      if (j == last) out.push_back(piece(Part::kHead, traced_pp - 1, k, 0));
      if (j < last) out.push_back(msg(true, 0, k, j + 1));
    } else {
      if (j < last) out.push_back(msg(false, 1, k, j + 1));
      for (uint32_t i = per; i-- > 0;) {  // the backward runs the layers last to first
        const auto [rank, x] = traced_instance(lo + i, traced_per, false);
        out.push_back(piece(Part::kLayerBwd, rank, k, x));
      }
      if (j == 0) out.push_back(piece(Part::kEmbedBwd, 0, k, 0));
      if (j > 0) out.push_back(msg(true, 1, k, j));
    }
  }
  out.push_back(piece(Part::kPost, home, 0, 0));
  return out;
}

// The structure checks: a step and a forward and a backward stretch per micro-batch on each
// traced stage, the stages' resources alike, each layer run a whole number of instances per new
// stage. Fills `by_rank`.
std::string unsupported(const Graph& g, const std::vector<LayerStretch>& st,
                        const StageRegroupRequest& req,
                        std::map<int32_t, std::vector<LayerStretch>>& by_rank) {
  for (const auto& s : st) by_rank[s.rank].push_back(s);
  const int traced_pp = static_cast<int>(by_rank.size());
  if (traced_pp != req.traced_pp)
    return strprintf("the trace holds the layers of %d of the %d stages' ranks", traced_pp,
                     req.traced_pp);
  if (by_rank.begin()->first != 0 || by_rank.rbegin()->first != traced_pp - 1)
    return "the traced ranks with layers are not one per stage";
  std::map<int32_t, uint32_t> resources;
  for (const auto& r : g.resources) ++resources[r.rank];
  if (resources.size() != by_rank.size())
    return "the traced graph holds ranks without layers; stages are regrouped from one rank "
           "per stage";
  for (const auto& [rank, count] : resources)
    if (count != resources.begin()->second) return "the traced stages' threads and streams differ";
  if (g.steps.size() != by_rank.size()) return "stages are regrouped from a trace of one step";
  const uint32_t per = st[0].instances;
  const uint32_t all = per * static_cast<uint32_t>(traced_pp);
  const int chunks = req.new_pp * req.new_interleave;
  if (all % static_cast<uint32_t>(chunks) != 0)
    return strprintf("%u traced layer instances do not split over %d model chunks", all, chunks);
  if (req.new_interleave > 1 && req.microbatches % req.new_pp != 0)
    return strprintf("an interleaved schedule runs a multiple of %d micro-batches, not %lld",
                     req.new_pp, static_cast<long long>(req.microbatches));
  for (const auto& [rank, rs] : by_rank) {
    if (rs.size() != static_cast<size_t>(2 * req.microbatches))
      return strprintf(
          "rank %d: %zu traced layer runs for %lld micro-batches (a forward and a "
          "backward run each expected)",
          rank, rs.size(), static_cast<long long>(req.microbatches));
    for (const auto& s : rs)
      if (s.instances != per) return "the traced passes' layer runs differ in length";
  }
  return "";
}

}  // namespace

StageRegroup regroup_stages(const Graph& g, const std::vector<LayerStretch>& st,
                            const StageRegroupRequest& req, const std::string& label) {
  StageRegroup out;
  std::map<int32_t, std::vector<LayerStretch>> by_rank;
  out.why_not = unsupported(g, st, req, by_rank);
  if (!out.why_not.empty()) return out;
  const int traced_pp = static_cast<int>(by_rank.size());
  const uint32_t traced_per = st[0].instances;
  const Cut c =
      cut_pieces(g, by_rank, traced_pp, req.microbatches, pipeline_messages(g, req.pipeline_nodes));
  if (!c.why_not.empty()) {
    out.why_not = c.why_not;
    return out;
  }
  const int pp = req.new_pp;
  const uint32_t n = g.num_nodes();
  // Each stage's threads and streams, numbered within their rank alike on every stage: by
  // kind, then thread or stream id (the process ids differ between ranks).
  std::vector<uint32_t> order(g.resources.size()), local(g.resources.size());
  for (uint32_t r = 0; r < order.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const graph::Resource &a = g.resources[x], &b = g.resources[y];
    return std::tie(a.rank, a.kind, a.b) < std::tie(b.rank, b.kind, b.b);
  });
  std::map<int32_t, uint32_t> count;
  std::vector<graph::Resource> stage_resources;
  for (uint32_t r : order) {
    local[r] = count[g.resources[r].rank]++;
    if (g.resources[r].rank == 0) stage_resources.push_back(g.resources[r]);
  }
  const uint32_t R = static_cast<uint32_t>(stage_resources.size());
  const uint32_t per = R + 2;  // the traced resources, a send stream, a receive stream
  const uint32_t cres = local[g.resource[st[0].kernels[0]]];
  const NodeId first_launch = launch_of(g, st[0].kernels[0]);
  const uint32_t tres = local[g.resource[first_launch]];
  for (const auto& [rank, rs] : by_rank) {
    const NodeId l = launch_of(g, rs[0].kernels[0]);
    if (local[g.resource[rs[0].kernels[0]]] != cres || l == graph::kOrigin ||
        local[g.resource[l]] != tres) {
      out.why_not = "the traced stages launch their layers from different threads or streams";
      return out;
    }
  }
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
  for (NodeId v = 1; v < n; ++v)
    if (c.of[v] != kUnset) by_piece[c.of[v]].push_back(v);
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
      const int to = (dir == 0 ? boundary : boundary - 1) % pp;  // the receiving stage
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
    const std::vector<Item> items =
        stage_items(c, s, pp, req.new_interleave, traced_pp, req.microbatches, traced_per);
    const auto home = static_cast<size_t>(c.pieces[static_cast<size_t>(items.front().piece)].rank);
    const double ratio =
        static_cast<size_t>(s) < req.new_params_by_stage.size() &&
                home < req.traced_params_by_stage.size() && req.traced_params_by_stage[home] > 0
            ? req.new_params_by_stage[static_cast<size_t>(s)] / req.traced_params_by_stage[home]
            : 1.0;
    const uint32_t base = static_cast<uint32_t>(s) * per;
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
    for (const Item& it : items) {
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
        const uint32_t r =
            g.resource[v] == graph::kNoResource ? graph::kNoResource : local[g.resource[v]];
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
          if (c.of[p] == kUnset) {
            if (is_chain(kind)) chain_lag = g.pred_lag_us[e];  // a dropped message before it
          } else if (c.of[p] == c.of[v] && copy[p] != kUnset) {
            d.edges.push_back({copy[p], id, kind, g.pred_lag_us[e]});
            chained |= is_chain(kind);
          } else if (is_chain(kind)) {
            chain_lag = g.pred_lag_us[e];  // the work before it there, in this stage's order
          } else {
            // From another piece: its copy on this stage, else the latest work on its resource.
            uint32_t src = copy[p];
            if (src == kUnset && g.resource[p] != graph::kNoResource)
              src = frontier[local[g.resource[p]]];
            if (src != kUnset) d.edges.push_back({src, id, kind, g.pred_lag_us[e]});
          }
        }
        if (r != graph::kNoResource)
          chain(id, r,
                stage_resources[r].kind == graph::ResourceKind::kThread ? EdgeKind::kIntraThread
                                                                        : EdgeKind::kIntraStream,
                chain_lag, !chained);
      }
    }
    graph::Step step = g.steps.front();
    for (const auto& x : g.steps)
      if (x.rank == static_cast<int32_t>(home)) step = x;
    step.rank = s;
    step.marker = copy[step.marker];
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
      graph::Resource x = stage_resources[r];
      x.rank = s;
      out.graph.resources.push_back(x);
    }
    const int64_t dev = stage_resources[cres].a;
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
