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

// Each stage's threads and streams, numbered within their rank alike on every stage: by kind,
// then thread or stream id (the process ids differ between ranks). Returns the number of each
// traced resource within its rank, and fills `stage` with rank 0's.
std::vector<uint32_t> number_resources(const Graph& g, std::vector<graph::Resource>& stage) {
  std::vector<uint32_t> order(g.resources.size()), local(g.resources.size());
  for (uint32_t r = 0; r < order.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const graph::Resource &a = g.resources[x], &b = g.resources[y];
    return std::tie(a.rank, a.kind, a.b) < std::tie(b.rank, b.kind, b.b);
  });
  std::map<int32_t, uint32_t> count;
  for (uint32_t r : order) {
    local[r] = count[g.resources[r].rank]++;
    if (g.resources[r].rank == 0) stage.push_back(g.resources[r]);
  }
  return local;
}

// Writes the new stages into a draft graph, one stage at a time.
class StageWriter {
 public:
  StageWriter(const Graph& g, const StageRegroupRequest& req, const Cut& c,
              std::vector<uint32_t> local, std::vector<graph::Resource> stage_resources,
              uint32_t cres, uint32_t tres, StageRegroup& out)
      : g_(g),
        req_(req),
        c_(c),
        local_(std::move(local)),
        res_(std::move(stage_resources)),
        R_(static_cast<uint32_t>(res_.size())),
        per_(R_ + 2),
        cres_(cres),
        tres_(tres),
        names_(g.names),
        by_piece_(c.pieces.size()),
        out_(out) {
    price_calls();
    d_.nodes.push_back(graph::DraftNode{});  // the origin
    for (NodeId v = 1; v < g.num_nodes(); ++v)
      if (c.of[v] != kUnset) by_piece_[c.of[v]].push_back(v);
  }

  // Stage s: its pieces and messages in order; its step (marker as a draft node).
  graph::Step stage(int s, const std::vector<Item>& items) {
    s_ = s;
    base_ = static_cast<uint32_t>(s) * per_;
    copy_.assign(g_.num_nodes(), kUnset);
    frontier_.assign(per_, kUnset);
    waits_.clear();
    const auto home = static_cast<size_t>(c_.pieces[static_cast<size_t>(items.front().piece)].rank);
    const auto& tp = req_.traced_params_by_stage;
    const auto& np = req_.new_params_by_stage;
    const double ratio = static_cast<size_t>(s) < np.size() && home < tp.size() && tp[home] > 0
                             ? np[static_cast<size_t>(s)] / tp[home]
                             : 1.0;
    for (const Item& it : items) {
      if (it.piece < 0)
        message(it);
      else
        copy_piece(static_cast<size_t>(it.piece), ratio);
    }
    graph::Step step = g_.steps.front();
    for (const auto& x : g_.steps)
      if (x.rank == static_cast<int32_t>(home)) step = x;
    step.rank = s;
    step.marker = copy_[step.marker];
    return step;
  }

  Graph finish(int pp, std::vector<graph::Step> steps, const std::string& label) {
    // Work with nothing before it on its stage (a stage's first call) starts from the origin.
    std::vector<uint8_t> has_pred(d_.nodes.size(), 0);
    for (const auto& e : d_.edges) has_pred[e.dst] = 1;
    for (uint32_t x = 1; x < d_.nodes.size(); ++x)
      if (!has_pred[x]) d_.edges.push_back({0, x, EdgeKind::kOrigin, 0});
    std::vector<NodeId> new_id;
    Graph out = graph::flatten(
        d_, &new_id, [&](uint32_t x) { return names_[d_.nodes[x].name]; }, label);
    for (int s = 0; s < pp; ++s) {
      for (graph::Resource x : res_) {
        x.rank = s;
        out.resources.push_back(x);
      }
      const int64_t dev = res_[cres_].a;
      out.resources.push_back({graph::ResourceKind::kStream, s, dev, 1000001});
      out.resources.push_back({graph::ResourceKind::kStream, s, dev, 1000002});
    }
    for (auto& step : steps)
      step.marker = step.marker == kUnset ? graph::kOrigin : new_id[step.marker];
    out.names = std::move(names_);
    out.steps = std::move(steps);
    out.t0_ns = g_.t0_ns, out.rank = g_.rank, out.source = g_.source;
    return out;
  }

 private:
  // The pipeline calls cost what the trace's own runtime calls cost; event calls, where the
  // trace has none, its launches' cost at the cost model's ratio.
  void price_calls() {
    std::vector<double> launches, events, lags;
    for (NodeId v = 1; v < g_.num_nodes(); ++v) {
      if (g_.kind[v] != NodeKind::kRuntime) continue;
      const std::string& nm = g_.names[g_.name[v]];
      if (nm.find("Launch") != std::string::npos) launches.push_back(g_.dur_us[v]);
      if (nm.find("Event") != std::string::npos) events.push_back(g_.dur_us[v]);
    }
    for (uint32_t e = 0; e < g_.num_edges(); ++e)
      if (g_.pred_kind[e] == EdgeKind::kLaunch) lags.push_back(g_.pred_lag_us[e]);
    launch_us_ = median(launches, 5);
    event_us_ = median(events, launch_us_ * req_.event_per_launch);
    launch_lag_us_ = median(lags, 0);
  }

  uint32_t name_id(const std::string& s) {
    auto it = std::find(names_.begin(), names_.end(), s);
    if (it != names_.end()) return static_cast<uint32_t>(it - names_.begin());
    names_.push_back(s);
    return static_cast<uint32_t>(names_.size() - 1);
  }

  uint32_t add(NodeKind kind, graph::NodeClass cls, uint32_t res, int32_t step, uint32_t name,
               double start, double dur) {
    graph::DraftNode x;
    x.kind = kind, x.cls = cls, x.resource = res, x.step = step, x.name = name;
    x.start_us = start, x.dur_us = dur;
    d_.nodes.push_back(x);
    return static_cast<uint32_t>(d_.nodes.size() - 1);
  }

  // Appends node `id` on resource r (numbered within the stage) after the work there so far;
  // the compute stream's next work also waits for the queued transfers.
  void chain(uint32_t id, uint32_t r, EdgeKind kind, double lag, bool link) {
    if (link && frontier_[r] != kUnset) d_.edges.push_back({frontier_[r], id, kind, lag});
    if (r == cres_) {
      for (uint32_t w : waits_) d_.edges.push_back({w, id, EdgeKind::kInterStream, 0});
      waits_.clear();
    }
    frontier_[r] = id;
  }

  uint32_t call(const char* name, double dur) {
    const uint32_t id =
        add(NodeKind::kRuntime, graph::NodeClass::kCpu, base_ + tres_, s_, name_id(name), 0, dur);
    chain(id, tres_, EdgeKind::kIntraThread, 0, true);
    return id;
  }

  // Messages: (dir, mb, boundary) -> the rendezvous and the transfer, on the receiving stage.
  struct Msg {
    uint32_t meet = kUnset, xfer = kUnset;
  };
  Msg& msg_of(int dir, int64_t mb, int boundary) {
    Msg& m = msgs_[{dir, mb, boundary}];
    if (m.meet == kUnset) {
      const int pp = req_.new_pp;
      const int to = (dir == 0 ? boundary : boundary - 1) % pp;  // the receiving stage
      m.meet = add(NodeKind::kVirtual, graph::NodeClass::kVirtual, graph::kNoResource, -1,
                   name_id("rendezvous"), 0, 0);
      m.xfer =
          add(NodeKind::kKernel, graph::NodeClass::kComm, static_cast<uint32_t>(to) * per_ + R_ + 1,
              to, name_id("ncclDevKernel_SendRecv"), 0, req_.p2p_us);
      d_.edges.push_back({m.meet, m.xfer, EdgeKind::kCrossRank, 0});
    }
    return m;
  }

  // One side of a pipeline message: the CPU calls, the arrival on the stage's send or receive
  // stream (a send after the compute stream's work so far), the rendezvous; the receiving
  // compute stream (and the sending one, where sends block) waits for the transfer.
  void message(const Item& it) {
    Msg& m = msg_of(it.dir, it.mb, it.boundary);
    const uint32_t side = it.send ? R_ : R_ + 1;
    if (it.send) call("cudaEventRecord", event_us_), call("cudaStreamWaitEvent", event_us_);
    const uint32_t l = call("cudaLaunchKernel", launch_us_);
    const uint32_t arr = add(NodeKind::kKernel, graph::NodeClass::kComm, base_ + side, s_,
                             name_id(it.send ? "ncclDevKernel_Send" : "ncclDevKernel_Recv"), 0, 0);
    d_.edges.push_back({l, arr, EdgeKind::kLaunch, launch_lag_us_});
    if (it.send && frontier_[cres_] != kUnset)
      d_.edges.push_back({frontier_[cres_], arr, EdgeKind::kInterStream, 0});
    chain(arr, side, EdgeKind::kIntraStream, 0, true);
    d_.edges.push_back({arr, m.meet, EdgeKind::kCrossRank, 0});
    frontier_[side] = m.xfer;
    if (!it.send || req_.p2p_blocking) {
      waits_.push_back(m.xfer);
      call("cudaEventRecord", event_us_), call("cudaStreamWaitEvent", event_us_);
    }
    out_.messages += it.send ? 1 : 0;
  }

  // A copy of piece p: its edges kept inside it; its first work on each thread or stream after
  // the stage's work there so far; other edges from another piece from that piece's copy on
  // this stage, else from the latest work on the predecessor's resource.
  void copy_piece(size_t p, double ratio) {
    const Part part = c_.pieces[p].part;
    ++out_.pieces;
    for (NodeId v : by_piece_[p]) {
      const uint32_t r =
          g_.resource[v] == graph::kNoResource ? graph::kNoResource : local_[g_.resource[v]];
      double dur = g_.dur_us[v];
      if (part == Part::kPost && !req_.scales_with_params.empty() && req_.scales_with_params[v] &&
          ratio != 1)
        dur *= ratio, ++out_.scaled;
      const uint32_t id = add(g_.kind[v], g_.cls[v], r == graph::kNoResource ? r : base_ + r, s_,
                              g_.name[v], g_.measured_start_us[v], dur);
      d_.nodes[id].event = g_.event[v];
      copy_[v] = id;
      bool chained = false;
      double chain_lag = 0;
      for (uint32_t e = g_.pred_offset[v]; e < g_.pred_offset[v + 1]; ++e) {
        const NodeId q = g_.pred_index[e];
        const EdgeKind kind = g_.pred_kind[e];
        const double lag = g_.pred_lag_us[e];
        if (q == graph::kOrigin) {
          // A time from the traced t0 holds only where the copy keeps its traced time.
          if (part == Part::kPre) d_.edges.push_back({0, id, kind, lag});
        } else if (c_.of[q] == kUnset || (c_.of[q] != c_.of[v] && is_chain(kind))) {
          if (is_chain(kind)) chain_lag = lag;  // the work before it there, in the stage's order
        } else if (c_.of[q] == c_.of[v] && copy_[q] != kUnset) {
          d_.edges.push_back({copy_[q], id, kind, lag});
          chained |= is_chain(kind);
        } else {
          uint32_t src = copy_[q];
          if (src == kUnset && g_.resource[q] != graph::kNoResource)
            src = frontier_[local_[g_.resource[q]]];
          if (src != kUnset) d_.edges.push_back({src, id, kind, lag});
        }
      }
      if (r != graph::kNoResource)
        chain(id, r,
              res_[r].kind == graph::ResourceKind::kThread ? EdgeKind::kIntraThread
                                                           : EdgeKind::kIntraStream,
              chain_lag, !chained);
    }
  }

  const Graph& g_;
  const StageRegroupRequest& req_;
  const Cut& c_;
  std::vector<uint32_t> local_;
  std::vector<graph::Resource> res_;
  uint32_t R_, per_, cres_, tres_;  // per_: a stage's resources (R_ traced, a send, a receive)
  double launch_us_ = 0, event_us_ = 0, launch_lag_us_ = 0;
  graph::Draft d_;
  std::vector<std::string> names_;
  std::vector<std::vector<NodeId>> by_piece_;
  std::map<std::tuple<int, int64_t, int>, Msg> msgs_;
  StageRegroup& out_;
  // The stage being written.
  int s_ = 0;
  uint32_t base_ = 0;
  std::vector<uint32_t> copy_, frontier_, waits_;
};

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
  std::vector<graph::Resource> stage_resources;
  std::vector<uint32_t> local = number_resources(g, stage_resources);
  const uint32_t cres = local[g.resource[st[0].kernels[0]]];
  const uint32_t tres = local[g.resource[launch_of(g, st[0].kernels[0])]];
  for (const auto& [rank, rs] : by_rank) {
    const NodeId l = launch_of(g, rs[0].kernels[0]);
    if (local[g.resource[rs[0].kernels[0]]] != cres || l == graph::kOrigin ||
        local[g.resource[l]] != tres) {
      out.why_not = "the traced stages launch their layers from different threads or streams";
      return out;
    }
  }
  StageWriter w(g, req, c, std::move(local), std::move(stage_resources), cres, tres, out);
  std::vector<graph::Step> steps;
  for (int s = 0; s < req.new_pp; ++s)
    steps.push_back(w.stage(s, stage_items(c, s, req.new_pp, req.new_interleave, traced_pp,
                                           req.microbatches, traced_per)));
  out.graph = w.finish(req.new_pp, std::move(steps), label);
  out.nodes_before = g.num_nodes();
  out.nodes_after = out.graph.num_nodes();
  return out;
}

}  // namespace lumos::whatif
