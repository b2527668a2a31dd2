#include "whatif/layer_splice.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "common/error.hpp"
#include "common/format.hpp"
#include "graph/flatten.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::whatif {

using graph::EdgeKind;
using graph::Graph;
using graph::NodeId;
using graph::NodeKind;

namespace {

constexpr int32_t kNone = -1;

bool is_gpu(NodeKind k) {
  return k == NodeKind::kKernel || k == NodeKind::kMemcpy || k == NodeKind::kMemset;
}
bool is_cpu(NodeKind k) {
  return k == NodeKind::kCpuOp || k == NodeKind::kRuntime || k == NodeKind::kSync;
}
// The edges that order one thread's or one stream's work.
bool is_chain(EdgeKind k) {
  return k == EdgeKind::kIntraThread || k == EdgeKind::kIntraStream;
}

// The whole blocks of a stretch, counted from where the block starts as the pattern's first
// repetition does: (first position, blocks). A stretch may begin a few kernels early (the last
// kernel of the previous pass repeats the layer's last) or repeat something else of the same
// period (optimizer kernels): (0, 0) then.
std::pair<uint32_t, uint32_t> whole_blocks(const std::vector<uint32_t>& seq, uint32_t from,
                                           uint32_t to, const std::vector<uint32_t>& block) {
  const uint32_t p = static_cast<uint32_t>(block.size());
  for (uint32_t o = 0; o < p && from + o + p <= to; ++o) {
    if (!std::equal(block.begin(), block.end(), seq.begin() + from + o)) continue;
    uint32_t n = 0;
    while (from + o + (n + 1) * p <= to &&
           std::equal(block.begin(), block.end(), seq.begin() + from + o + n * p))
      ++n;
    return {from + o, n};
  }
  return {0, 0};
}

// The stretches of one rank's step: the two repeating blocks (forward and backward layers) as
// recognise_job finds them, in time order. Only whole blocks are masked out before looking for
// the second, so that a pass of two layers keeps both.
void stretches_of(const Graph& g, int32_t rank, int32_t step, const std::vector<NodeId>& nodes,
                  uint32_t max_period, std::vector<LayerStretch>& out) {
  std::vector<uint32_t> seq;
  for (NodeId v : nodes) seq.push_back(g.name[v]);
  const size_t first = out.size();
  std::vector<uint32_t> rest = seq;
  for (int pass = 0; pass < 2; ++pass) {
    const RepeatPattern p = find_repeats(rest, max_period);
    if (p.period == 0) break;
    const std::vector<uint32_t> block(rest.begin() + p.first_kernel,
                                      rest.begin() + p.first_kernel + p.period);
    for (const auto& [from, to] : p.stretches) {
      const auto [begin, n] = whole_blocks(rest, from, to, block);
      if (n < 2) continue;
      LayerStretch s;
      s.rank = rank, s.step = step, s.period = p.period, s.instances = n;
      s.kernels.assign(nodes.begin() + begin, nodes.begin() + begin + n * p.period);
      s.first_start_us = g.measured_start_us[s.kernels.front()];
      out.push_back(std::move(s));
      for (uint32_t x = begin; x < begin + n * p.period; ++x) rest[x] = 0x80000000u + x;
    }
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [](const auto& x, const auto& y) { return x.first_start_us < y.first_start_us; });
}

}  // namespace

std::vector<LayerStretch> find_layer_stretches(const Graph& g, uint32_t max_period) {
  // Each rank's compute stream: the most non-collective kernel time.
  std::vector<double> busy(g.resources.size(), 0);
  for (NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.kind[v] == NodeKind::kKernel && g.cls[v] != graph::NodeClass::kComm &&
        g.resource[v] != graph::kNoResource)
      busy[g.resource[v]] += g.dur_us[v];
  std::map<int32_t, uint32_t> compute;
  for (uint32_t r = 0; r < g.resources.size(); ++r) {
    if (g.resources[r].kind != graph::ResourceKind::kStream || busy[r] <= 0) continue;
    auto it = compute.find(g.resources[r].rank);
    if (it == compute.end() || busy[r] > busy[it->second]) compute[g.resources[r].rank] = r;
  }
  std::map<std::pair<int32_t, int32_t>, std::vector<NodeId>> seqs;  // (rank, step) -> kernels
  for (NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != NodeKind::kKernel || g.cls[v] == graph::NodeClass::kComm ||
        g.resource[v] == graph::kNoResource)
      continue;
    const int32_t rank = g.resources[g.resource[v]].rank;
    auto c = compute.find(rank);
    if (c != compute.end() && c->second == g.resource[v]) seqs[{rank, g.step[v]}].push_back(v);
  }
  std::vector<LayerStretch> out;
  for (auto& [key, nodes] : seqs) {
    std::stable_sort(nodes.begin(), nodes.end(), [&](NodeId x, NodeId y) {
      return g.measured_start_us[x] < g.measured_start_us[y];
    });
    stretches_of(g, key.first, key.second, nodes, max_period, out);
  }
  return out;
}

bool split_passes(std::vector<LayerStretch>& stretches, uint32_t per_pass) {
  if (per_pass < 2) return false;
  for (const auto& s : stretches)
    if (s.instances % per_pass != 0) return false;
  std::vector<LayerStretch> out;
  for (const auto& s : stretches) {
    const uint32_t n = per_pass * s.period;
    for (uint32_t i = 0; i < s.instances / per_pass; ++i) {
      LayerStretch x = s;
      x.instances = per_pass;
      x.kernels.assign(s.kernels.begin() + i * n, s.kernels.begin() + (i + 1) * n);
      x.first_start_us = s.first_start_us;
      out.push_back(std::move(x));
    }
  }
  stretches = std::move(out);
  return true;
}

namespace {

enum Role : uint8_t { kOther, kAnchor, kRemoved, kBefore };

// Which layer instance (unit) each node belongs to, and its place in the unit.
struct Units {
  std::vector<int32_t> of;        // per node: unit, kNone outside every instance
  std::vector<uint32_t> ord;      // per node: position among its unit's nodes on its resource
  std::vector<uint32_t> stretch;  // per unit
  std::vector<uint32_t> index;    // per unit: instance within the stretch
  std::vector<uint32_t> first;    // per stretch: its first unit
  std::unordered_map<uint64_t, NodeId> at;    // key(unit, resource, ord) -> node
  std::unordered_map<uint64_t, NodeId> last;  // key(unit, resource, 0) -> its last node there
  std::vector<NodeId> rendezvous_after;       // per node: the virtual node it arrives at, or 0
};

// Units, resources and positions each fit 21 bits in the graphs a trace gives.
uint64_t key(int32_t unit, uint32_t resource, uint32_t ord) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(unit)) << 42) |
         (static_cast<uint64_t>(resource & 0x1fffff) << 21) | (ord & 0x1fffff);
}

NodeId launch_of(const Graph& g, NodeId v) {
  for (uint32_t k = g.pred_offset[v]; k < g.pred_offset[v + 1]; ++k)
    if (g.pred_kind[k] == EdgeKind::kLaunch) return g.pred_index[k];
  return graph::kOrigin;
}

// CPU work between two launches of the layer's first kernel on the launching thread.
void label_cpu(const Graph& g, const LayerStretch& s, uint32_t base,
               const std::map<uint32_t, std::vector<NodeId>>& cpu_by_thread, Units& u) {
  std::vector<double> w(s.instances + 1, 0);
  uint32_t thread = graph::kNoResource;
  for (uint32_t i = 0; i < s.instances; ++i) {
    const NodeId l = launch_of(g, s.kernels[i * s.period]);
    if (l == graph::kOrigin || (thread != graph::kNoResource && g.resource[l] != thread)) return;
    thread = g.resource[l], w[i] = g.measured_start_us[l];
  }
  // The last instance ends as long after its start as the one before it did.
  w[s.instances] = 2 * w[s.instances - 1] - w[s.instances - 2];
  auto it = cpu_by_thread.find(thread);
  if (it == cpu_by_thread.end()) return;
  const std::vector<NodeId>& on = it->second;
  for (uint32_t i = 0; i < s.instances; ++i) {
    auto from = std::lower_bound(on.begin(), on.end(), w[i],
                                 [&](NodeId v, double t) { return g.measured_start_us[v] < t; });
    for (; from != on.end() && g.measured_start_us[*from] < w[i + 1]; ++from)
      if (u.of[*from] == kNone) u.of[*from] = static_cast<int32_t>(base + i);
  }
}

Units label_units(const Graph& g, const std::vector<LayerStretch>& stretches) {
  const uint32_t n = g.num_nodes();
  Units u;
  u.of.assign(n, kNone);
  u.ord.assign(n, 0);
  u.rendezvous_after.assign(n, graph::kOrigin);
  std::map<uint32_t, std::vector<NodeId>> cpu_by_thread;
  for (NodeId v = 1; v < n; ++v)
    if (is_cpu(g.kind[v]) && g.resource[v] != graph::kNoResource)
      cpu_by_thread[g.resource[v]].push_back(v);
  for (auto& [t, on] : cpu_by_thread)
    std::stable_sort(on.begin(), on.end(), [&](NodeId x, NodeId y) {
      return g.measured_start_us[x] < g.measured_start_us[y];
    });
  for (uint32_t s = 0; s < stretches.size(); ++s) {
    const LayerStretch& st = stretches[s];
    const uint32_t base = static_cast<uint32_t>(u.stretch.size());
    u.first.push_back(base);
    for (uint32_t i = 0; i < st.instances; ++i) {
      u.stretch.push_back(s), u.index.push_back(i);
      for (uint32_t k = 0; k < st.period; ++k)
        u.of[st.kernels[i * st.period + k]] = static_cast<int32_t>(base + i);
    }
    label_cpu(g, st, base, cpu_by_thread, u);
  }
  // In topological order: GPU work goes with the CPU work that launched it; a collective's
  // transfer with its arrival on the same stream.
  for (NodeId v = 1; v < n; ++v) {
    for (uint32_t k = g.pred_offset[v]; k < g.pred_offset[v + 1]; ++k) {
      const NodeId p = g.pred_index[k];
      if (g.pred_kind[k] == EdgeKind::kCrossRank && g.kind[v] == NodeKind::kVirtual)
        u.rendezvous_after[p] = v;
      if (u.of[v] != kNone || !is_gpu(g.kind[v])) continue;
      if (g.pred_kind[k] == EdgeKind::kLaunch) u.of[v] = u.of[p];
      if (g.pred_kind[k] == EdgeKind::kCrossRank && g.kind[p] == NodeKind::kVirtual)
        for (uint32_t q = g.pred_offset[p]; q < g.pred_offset[p + 1]; ++q)
          if (g.resource[g.pred_index[q]] == g.resource[v]) u.of[v] = u.of[g.pred_index[q]];
    }
  }
  std::unordered_map<uint64_t, uint32_t> count;
  for (NodeId v = 1; v < n; ++v) {
    if (u.of[v] == kNone) continue;
    const uint64_t k = key(u.of[v], g.resource[v], 0);
    u.ord[v] = count[k]++;
    u.at[key(u.of[v], g.resource[v], u.ord[v])] = v;
    u.last[k] = v;
  }
  return u;
}

// A rendezvous takes the role its arrivals share (kOther when they differ).
Role role_of(const Graph& g, const Units& u, const std::vector<Role>& unit_role, NodeId v) {
  if (g.kind[v] != NodeKind::kVirtual) return u.of[v] == kNone ? kOther : unit_role[u.of[v]];
  Role r = kOther;
  bool any = false;
  for (uint32_t k = g.pred_offset[v]; k < g.pred_offset[v + 1]; ++k) {
    if (g.pred_kind[k] != EdgeKind::kCrossRank) return kOther;
    const int32_t un = u.of[g.pred_index[k]];
    const Role pr = un == kNone ? kOther : unit_role[un];
    if (any && pr != r) return kOther;
    r = pr, any = true;
  }
  return r;
}

// The node of unit `to` that plays p's part in p's unit: the same resource and position; for a
// rendezvous, the one its counterpart arrival meets at. kOrigin when there is none.
NodeId counterpart(const Graph& g, const Units& u, NodeId p, int32_t to) {
  if (g.kind[p] == NodeKind::kVirtual) {
    const NodeId a = g.pred_index[g.pred_offset[p]];
    const NodeId b = counterpart(g, u, a, to);
    return b == graph::kOrigin ? graph::kOrigin : u.rendezvous_after[b];
  }
  auto it = u.at.find(key(to, g.resource[p], u.ord[p]));
  return it == u.at.end() ? graph::kOrigin : it->second;
}

// The work before p on its thread or stream: its chain predecessor, or for a collective's
// transfer (whose only predecessor is the rendezvous) its arrival's. kOrigin when none.
NodeId work_before(const Graph& g, NodeId p) {
  for (uint32_t e = g.pred_offset[p]; e < g.pred_offset[p + 1]; ++e)
    if (is_chain(g.pred_kind[e])) return g.pred_index[e];
  for (uint32_t e = g.pred_offset[p]; e < g.pred_offset[p + 1]; ++e) {
    const NodeId r = g.pred_index[e];
    if (g.pred_kind[e] != EdgeKind::kCrossRank || g.kind[r] != NodeKind::kVirtual) continue;
    for (uint32_t k = g.pred_offset[r]; k < g.pred_offset[r + 1]; ++k)
      if (g.resource[g.pred_index[k]] == g.resource[p]) return g.pred_index[k];
  }
  return graph::kOrigin;
}

int32_t unit_of_virtual(const Graph& g, const Units& u, NodeId v) {
  return g.kind[v] == NodeKind::kVirtual ? u.of[g.pred_index[g.pred_offset[v]]] : u.of[v];
}

}  // namespace

LayerSplice splice_layers(const Graph& g, int delta, const std::string& label) {
  return splice_layers(g, find_layer_stretches(g), delta, label);
}

LayerSplice splice_layers(const Graph& g, const std::vector<LayerStretch>& stretches, int delta,
                          const std::string& label) {
  LUMOS_EXPECT(!stretches.empty(), label +
                                       ": no block of kernels repeats on the compute stream, so "
                                       "the traced graph has no layers to duplicate or remove");
  const Units u = label_units(g, stretches);
  const uint32_t n = g.num_nodes();
  const uint32_t k = delta < 0 ? static_cast<uint32_t>(-delta) : 0;
  std::vector<Role> unit_role(u.stretch.size(), kOther);
  std::vector<uint32_t> anchor(stretches.size(), 0);  // first edited instance per stretch
  LayerSplice out;
  for (uint32_t s = 0; s < stretches.size(); ++s) {
    const uint32_t r = stretches[s].instances;
    LUMOS_EXPECT(r >= 2, strprintf("%s: a pass of rank %d has %u layer instance; an edit needs two",
                                   label.c_str(), stretches[s].rank, r));
    LUMOS_EXPECT(delta >= 0 || k < r,
                 strprintf("%s: a pass of rank %d has %u layer instances; removing %u would "
                           "leave none",
                           label.c_str(), stretches[s].rank, r, k));
    const uint32_t m = delta >= 0 ? r / 2 : 1 + (r - 1 - k) / 2;
    anchor[s] = m;
    unit_role[u.first[s] + m - 1] = kBefore;
    if (delta > 0) unit_role[u.first[s] + m] = kAnchor;
    for (uint32_t i = 0; i < k; ++i) unit_role[u.first[s] + m + i] = kRemoved;
    ++out.stretches, out.instances_before += r;
    out.instances_after += static_cast<uint32_t>(static_cast<int64_t>(r) + delta);
  }
  std::vector<Role> role(n, kOther);
  for (NodeId v = 1; v < n; ++v) role[v] = role_of(g, u, unit_role, v);
  // The draft: the kept nodes in their order, then `delta` copies of the anchors.
  graph::Draft d;
  std::vector<uint32_t> id(n, UINT32_MAX);
  std::vector<NodeId> copied;  // the anchors' nodes, in order
  std::vector<uint32_t> copy_pos(n, UINT32_MAX);
  auto draft_node = [&](NodeId v, double shift_us) {
    graph::DraftNode x;
    x.kind = g.kind[v], x.cls = g.cls[v], x.resource = g.resource[v], x.step = g.step[v];
    x.name = g.name[v], x.event = g.event[v];
    x.start_us = g.measured_start_us[v] + shift_us, x.dur_us = g.dur_us[v];
    d.nodes.push_back(x);
    return static_cast<uint32_t>(d.nodes.size() - 1);
  };
  for (NodeId v = 0; v < n; ++v) {
    if (role[v] == kRemoved) {
      ++out.nodes_removed;
      continue;
    }
    id[v] = draft_node(v, 0);
    if (role[v] == kAnchor) copy_pos[v] = static_cast<uint32_t>(copied.size()), copied.push_back(v);
  }
  const uint32_t copies = delta > 0 ? static_cast<uint32_t>(delta) : 0;
  const uint64_t total = d.nodes.size() + uint64_t{copies} * copied.size();
  LUMOS_EXPECT(total <= graph::kMaxBuiltNodes,
               strprintf("%s: the edited graph would have %llu nodes, more than the limit of %llu "
                         "(fewer layers)",
                         label.c_str(), static_cast<unsigned long long>(total),
                         static_cast<unsigned long long>(graph::kMaxBuiltNodes)));
  std::vector<std::vector<uint32_t>> copy_id(copies);
  auto unit_shift_us = [&](NodeId v) {
    const int32_t un = unit_of_virtual(g, u, v);
    if (un == kNone) return 0.0;
    const LayerStretch& s = stretches[u.stretch[un]];
    const uint32_t m = anchor[u.stretch[un]];
    return g.measured_start_us[s.kernels[m * s.period]] -
           g.measured_start_us[s.kernels[(m - 1) * s.period]];
  };
  for (uint32_t j = 0; j < copies; ++j)
    for (NodeId v : copied)
      copy_id[j].push_back(draft_node(v, (j + 1) * unit_shift_us(v))), ++out.nodes_added;
  // Nodes outside the anchors that waited on them (they follow the last copy).
  std::vector<uint8_t> after_anchor(n, 0);
  for (NodeId v = 1; v < n; ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
      after_anchor[v] |= role[v] != kAnchor && role[g.pred_index[e]] == kAnchor;
  // A removed predecessor: on a thread or stream, the work before the removed ones; otherwise
  // its counterpart in the instance before them.
  auto resolve_removed = [&](NodeId p, EdgeKind kind) -> NodeId {
    if (is_chain(kind)) {
      while (role[p] == kRemoved) {
        p = work_before(g, p);
        if (p == graph::kOrigin) return graph::kOrigin;
      }
      return p;
    }
    const int32_t un = unit_of_virtual(g, u, p);
    const NodeId c = un == kNone
                         ? graph::kOrigin
                         : counterpart(g, u, p, u.first[u.stretch[un]] + anchor[u.stretch[un]] - 1);
    return role[c] == kRemoved ? graph::kOrigin : c;
  };
  for (NodeId v = 1; v < n; ++v) {
    if (role[v] == kRemoved) continue;
    bool any = false;
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      NodeId p = g.pred_index[e];
      uint32_t src = 0;
      if (role[p] == kRemoved) {
        p = resolve_removed(p, g.pred_kind[e]);
        if (p == graph::kOrigin) continue;
        src = id[p];
      } else if (role[p] == kAnchor && role[v] != kAnchor && copies > 0) {
        src = copy_id[copies - 1][copy_pos[p]];
      } else {
        src = id[p];
      }
      d.edges.push_back({src, id[v], g.pred_kind[e], g.pred_lag_us[e]});
      any = true;
    }
    if (!any) d.edges.push_back({0, id[v], EdgeKind::kOrigin, g.measured_start_us[v]});
  }
  // The copies: inside the anchor, copy to copy; from the instance before, shifted by one. A
  // copy's first work on a thread or stream follows the previous copy's last work there.
  auto in_copy = [&](uint32_t j, NodeId q) { return j == 0 ? id[q] : copy_id[j - 1][copy_pos[q]]; };
  for (uint32_t j = 0; j < copies; ++j) {
    for (uint32_t c = 0; c < copied.size(); ++c) {
      const NodeId v = copied[c];
      const int32_t unit = unit_of_virtual(g, u, v);
      bool any = false;
      for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
        const NodeId p = g.pred_index[e];
        uint32_t src = id[p];
        if (role[p] == kAnchor) {
          src = copy_id[j][copy_pos[p]];
        } else if (is_chain(g.pred_kind[e]) && unit != kNone) {
          auto it = u.last.find(key(unit, g.resource[v], 0));
          if (it != u.last.end() && role[it->second] == kAnchor) src = in_copy(j, it->second);
        } else if (role[p] == kBefore && unit != kNone) {
          const NodeId q = counterpart(g, u, p, unit);
          if (q != graph::kOrigin && role[q] == kAnchor) src = in_copy(j, q);
        } else if (after_anchor[p]) {
          continue;  // work that followed the anchor follows the last copy, not this one
        }
        d.edges.push_back({src, copy_id[j][c], g.pred_kind[e], g.pred_lag_us[e]});
        any = true;
      }
      if (!any)
        d.edges.push_back({0, copy_id[j][c], EdgeKind::kOrigin, d.nodes[copy_id[j][c]].start_us});
    }
  }
  std::vector<NodeId> new_id;
  out.graph = graph::flatten(
      d, &new_id, [&](uint32_t x) { return g.names[d.nodes[x].name]; }, label);
  out.graph.resources = g.resources;
  out.graph.names = g.names;
  out.graph.steps = g.steps;
  for (auto& st : out.graph.steps)
    st.marker = id[st.marker] == UINT32_MAX ? graph::kOrigin : new_id[id[st.marker]];
  out.graph.t0_ns = g.t0_ns, out.graph.rank = g.rank, out.graph.source = g.source;
  return out;
}

}  // namespace lumos::whatif
