#include "cost/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "cost/memory_model.hpp"

namespace lumos::cost {
namespace {

constexpr int kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3;  // nccl.json algorithm order
constexpr int kNvlink = 0, kNet = 2;                           // nccl.json link order

int node_class(int nodes) {
  return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2;
}

struct Layout {
  int n = 1, ppn = 1, nodes = 1;
  double bw_intra = 0;  // GB/s, NVLink as NCCL counts it
  double bw_inter = 0;  // GB/s per GPU's share of the node's NICs, at achieved efficiency
};

struct Candidate {
  CollAlgo algo;
  CollProto proto;
  double lat_us;
  double algbw_gbps;
};

constexpr CollProto kProtos[3] = {CollProto::kLL, CollProto::kLL128, CollProto::kSimple};

Layout make_layout(const GpuSpec& gpu, const Topology& topo, const CollectiveQuery& q) {
  Layout L;
  L.n = q.ranks;
  L.ppn = std::min(q.ranks_per_node, q.ranks);
  L.nodes = (L.n + L.ppn - 1) / L.ppn;
  L.bw_intra = gpu.nccl_nvlink_total_gbps() * topo.nvlink_efficiency;
  L.bw_inter = L.ppn * topo.nics_per_gpu * topo.nic_gbps * topo.nic_efficiency;
  return L;
}

// One rank: a local copy (read and write the buffer once), NCCL's own copy kernel.
CollectiveEstimate single_rank_time(const KernelsDb& db, const GpuSpec& gpu,
                                    const CollectiveQuery& q) {
  CollectiveEstimate out;
  out.time_us = membound_time_us(db, gpu, "reduce", 2.0 * q.bytes);
  out.latency_us = db.membound.floor_us;
  out.algo = CollAlgo::kDirect;
  out.algbw_gbps = q.bytes / (out.time_us * 1e3);
  return out;
}

// What every candidate's latency and bandwidth are made of: the layout, NCCL's tables for this
// GPU and the topology's calibration of them.
struct CandidateModel {
  const NcclParams& p;
  const GpuSpec& gpu;
  const Topology& topo;
  const CollectiveQuery& q;
  const Layout& L;
  const NcclCaps& caps;
  int nc;      // node class: 0 one node, 1 two, 2 more
  double ch;   // channels
  double bus;  // bus bandwidth of the ring through NVLink and, across nodes, the NICs

  // Latency tables scaled by the topology's calibration (1 = NCCL's constants).
  double base_lat(int algo, int pr) const {
    return p.base_latency_us[algo][pr] * topo.base_latency_scale[pr];
  }
  double hw_lat(int link, int algo, int pr) const {
    return p.hw_latency_us[link][algo][pr] *
           (link == kNet ? topo.net_latency_scale : topo.nvlink_latency_scale);
  }
  double ring_latency(int pr, int nsteps, int inter_steps) const {
    const double intra = hw_lat(kNvlink, kRing, pr);
    const double inter = hw_lat(kNet, kRing, pr);
    const double overhead = p.net_overhead_us * (pr == 2 ? 3 : 1);
    const double per_intra = L.nodes > 1 ? std::max(intra, overhead) : intra;
    return base_lat(kRing, pr) + (nsteps - inter_steps) * per_intra + inter_steps * inter;
  }
  double ring_bus(int pr) const {
    if (pr == 0) return std::min(caps.ll_max_bw[nc], bus * 0.5);
    if (pr == 1) return std::min(bus * 0.92, ch * caps.ring_ll128_per_ch);
    return bus;
  }
};

// Ring for all-reduce, all-gather, reduce-scatter, broadcast and reduce.
void add_ring(const CandidateModel& m, std::vector<Candidate>* cands) {
  const CollectiveQuery& q = m.q;
  const Layout& L = m.L;
  const bool ar = q.op == Collective::kAllReduce;
  const int nsteps = ar ? 2 * (L.n - 1)
                     : (q.op == Collective::kAllGather || q.op == Collective::kReduceScatter)
                         ? L.n - 1
                         : L.n;
  const int inter_steps = L.nodes > 1 ? (ar ? 2 * (L.nodes - 1) : L.nodes - 1) : 0;
  for (int pr = 0; pr < 3; ++pr) {
    double lat = m.ring_latency(pr, nsteps, inter_steps);
    if (ar && pr == 2 && L.nodes > 1 && q.bytes / (m.ch * L.n) >= 64)
      lat *= m.p.ring_plateau_factor;
    // Broadcast and reduce pipeline along the chain: bus bandwidth is algorithm bandwidth.
    const double alg = (q.op == Collective::kBroadcast || q.op == Collective::kReduce)
                           ? m.ring_bus(pr)
                           : m.ring_bus(pr) * L.n / nsteps;
    cands->push_back({CollAlgo::kRing, kProtos[pr], lat, alg});
  }
}

// Tree (all-reduce): up and down a tree within nodes and across them (bandwidth halves).
void add_tree(const CandidateModel& m, std::vector<Candidate>* cands) {
  const Layout& L = m.L;
  const double bus = m.bus, ch = m.ch;
  const int nc = m.nc;
  const int idx =
      std::clamp(static_cast<int>(std::floor(std::log2(std::max(64.0, m.q.bytes) / 64.0))), 0, 23);
  for (int pr = 0; pr < 3; ++pr) {
    const double lat = m.base_lat(kTree, pr) +
                       2.0 * ((L.ppn - 1) * m.hw_lat(kNvlink, kTree, pr) +
                              std::log2(static_cast<double>(L.nodes)) * m.hw_lat(kNet, kTree, pr));
    double bw = pr == 0   ? std::min(bus / 3.8, m.caps.ll_max_bw[nc])
                : pr == 1 ? std::min(bus * (L.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                                     ch * m.caps.tree_ll128_per_ch[nc])
                          : std::min(bus * 0.92, ch * m.caps.tree_per_ch[nc]);
    bw *= m.p.tree_correction[pr][idx];
    cands->push_back({CollAlgo::kTree, kProtos[pr], lat, bw * 0.5});
  }
}

// NVLS (NVLink SHARP, in-switch reduction; all-reduce): Hopper and later, enough GPUs per node.
void add_nvls(const CandidateModel& m, std::vector<Candidate>* cands) {
  const Layout& L = m.L;
  const double ch = m.ch;
  auto eff_it = m.p.nvls_efficiency.find(m.gpu.arch);
  if (eff_it == m.p.nvls_efficiency.end() || L.ppn < m.p.nvls_min_ranks_per_node) return;
  const double intra_alg = L.bw_intra * eff_it->second * (ch - 1) / ch;
  if (L.nodes == 1) {
    cands->push_back({CollAlgo::kNvls, CollProto::kSimple, m.hw_lat(kNvlink, kNvls, 2), intra_alg});
    return;
  }
  // NVLSTree: NVLS inside the node, a tree across nodes (up and down the NICs).
  const double inter_alg = L.nodes == 2 ? L.bw_inter : L.bw_inter / 2;
  const double alg = std::min({intra_alg, inter_alg, ch * m.caps.nvls_tree_per_ch[m.nc]});
  const double lat = m.base_lat(kNvlsTree, 2) + m.hw_lat(kNvlink, kNvlsTree, 2) +
                     2.0 * std::log2(static_cast<double>(L.nodes)) * m.hw_lat(kNet, kNvlsTree, 2);
  if (alg > 0) cands->push_back({CollAlgo::kNvlsTree, CollProto::kSimple, lat, alg});
}

// All-to-all: every rank sends (n-1)/n of its buffer: to its node over NVLink, to the rest over
// NICs.
Candidate all_to_all(const CandidateModel& m) {
  const CollectiveQuery& q = m.q;
  const Layout& L = m.L;
  const Topology& topo = m.topo;
  const double intra_bytes = q.bytes * (L.ppn - 1) / L.n,
               inter_bytes = q.bytes * (L.n - L.ppn) / L.n;
  const double per_gpu_nic = topo.nics_per_gpu * topo.nic_gbps * topo.nic_efficiency;
  const double t_data = std::max(intra_bytes / (L.bw_intra * 1e3),
                                 inter_bytes > 0 ? inter_bytes / (per_gpu_nic * 1e3) : 0.0);
  const double lat =
      m.base_lat(kRing, 2) + (L.nodes > 1 ? m.hw_lat(kNet, kRing, 2) : m.hw_lat(kNvlink, kRing, 2));
  return {CollAlgo::kDirect, CollProto::kSimple, lat, t_data > 0 ? q.bytes / (t_data * 1e3) : 1e30};
}

Candidate send_recv(const CandidateModel& m) {
  const Topology& topo = m.topo;
  const bool same_node = m.L.nodes == 1;
  const double bw =
      same_node ? m.L.bw_intra : topo.nics_per_gpu * topo.nic_gbps * topo.nic_efficiency;
  const double lat =
      m.base_lat(kRing, 2) + (same_node ? m.hw_lat(kNvlink, kRing, 2) : m.hw_lat(kNet, kRing, 2));
  return {CollAlgo::kDirect, CollProto::kSimple, lat, bw};
}

// Every (algorithm, protocol) NCCL would consider for this collective, in NCCL's order.
std::vector<Candidate> candidates(const CandidateModel& m) {
  std::vector<Candidate> cands;
  switch (m.q.op) {
    case Collective::kAllReduce:
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kBroadcast:
    case Collective::kReduce:
      add_ring(m, &cands);
      if (m.q.op != Collective::kAllReduce) break;
      add_tree(m, &cands);
      add_nvls(m, &cands);
      break;
    case Collective::kAllToAll:
      cands.push_back(all_to_all(m));
      break;
    case Collective::kSendRecv:
      cands.push_back(send_recv(m));
      break;
  }
  return cands;
}

}  // namespace

double busbw_factor(Collective c, int n) {
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

CollectiveEstimate collective_time(const KernelsDb& db, const GpuSpec& gpu, const Topology& topo,
                                   const CollectiveQuery& q) {
  LUMOS_EXPECT(q.ranks >= 1, "collective: ranks must be at least 1");
  LUMOS_EXPECT(q.ranks_per_node >= 1, "collective: ranks per node must be at least 1");
  LUMOS_EXPECT(q.bytes >= 0, "collective: bytes must be non-negative");
  LUMOS_EXPECT(q.op != Collective::kSendRecv || q.ranks == 2,
               "collective: send/recv is between 2 ranks");
  const NcclParams& p = db.nccl;
  const Layout L = make_layout(gpu, topo, q);
  const NcclCaps& caps = p.caps.at(gpu.arch);
  if (L.n == 1) return single_rank_time(db, gpu, q);
  const double bus =
      L.nodes > 1 ? (L.ppn > 1 ? std::min(L.bw_intra, L.bw_inter) : L.bw_inter) : L.bw_intra;
  const CandidateModel m{
      p, gpu, topo, q, L, caps, node_class(L.nodes), static_cast<double>(p.channels), bus};
  const std::vector<Candidate> cands = candidates(m);
  // The fastest candidate the query allows wins, as in NCCL.
  const Candidate* best = nullptr;
  double best_t = std::numeric_limits<double>::infinity();
  for (const Candidate& c : cands) {
    if (q.algo != CollAlgo::kAuto && c.algo != q.algo) continue;
    if (!(c.algbw_gbps > 0)) continue;
    const double t = c.lat_us + q.bytes / (c.algbw_gbps * 1e3);
    if (t < best_t) {
      best_t = t;
      best = &c;
    }
  }
  LUMOS_EXPECT(best != nullptr, std::string("collective: algorithm ") + to_string(q.algo) +
                                    " cannot run " + to_string(q.op) + " on " +
                                    std::to_string(L.n) + " ranks (" + std::to_string(L.ppn) +
                                    " per node) of " + gpu.name);
  CollectiveEstimate out;
  out.time_us = best_t;
  out.latency_us = best->lat_us;
  out.algo = best->algo;
  out.proto = best->proto;
  out.algbw_gbps = q.bytes / (best_t * 1e3);
  out.busbw_gbps = out.algbw_gbps * busbw_factor(q.op, L.n);
  return out;
}

Collective parse_collective(const std::string& s) {
  if (s == "allreduce" || s == "all_reduce" || s == "ar") return Collective::kAllReduce;
  if (s == "allgather" || s == "all_gather" || s == "ag") return Collective::kAllGather;
  if (s == "reducescatter" || s == "reduce_scatter" || s == "rs") return Collective::kReduceScatter;
  if (s == "alltoall" || s == "all_to_all" || s == "a2a") return Collective::kAllToAll;
  if (s == "broadcast" || s == "bcast") return Collective::kBroadcast;
  if (s == "reduce") return Collective::kReduce;
  if (s == "sendrecv" || s == "send" || s == "recv" || s == "p2p") return Collective::kSendRecv;
  throw InputError(
      "unknown collective '" + s +
      "' (expected allreduce, allgather, reducescatter, alltoall, broadcast, reduce or sendrecv)");
}

CollAlgo parse_coll_algo(const std::string& s) {
  if (s == "auto") return CollAlgo::kAuto;
  if (s == "ring") return CollAlgo::kRing;
  if (s == "tree") return CollAlgo::kTree;
  if (s == "nvls") return CollAlgo::kNvls;
  if (s == "nvlstree" || s == "nvls_tree") return CollAlgo::kNvlsTree;
  throw InputError("unknown algorithm '" + s + "' (expected auto, ring, tree, nvls or nvlstree)");
}

const char* to_string(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
    case Collective::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

const char* to_string(CollAlgo a) {
  switch (a) {
    case CollAlgo::kAuto:
      return "auto";
    case CollAlgo::kRing:
      return "ring";
    case CollAlgo::kTree:
      return "tree";
    case CollAlgo::kNvls:
      return "nvls";
    case CollAlgo::kNvlsTree:
      return "nvlstree";
    case CollAlgo::kDirect:
      return "direct";
  }
  return "?";
}

const char* to_string(CollProto p) {
  switch (p) {
    case CollProto::kLL:
      return "LL";
    case CollProto::kLL128:
      return "LL128";
    case CollProto::kSimple:
      return "Simple";
  }
  return "?";
}

}  // namespace lumos::cost
