#include "whatif/peer_waits.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/collective_model.hpp"
#include "cost/dtype.hpp"

namespace lumos::whatif {

namespace {

bool is_p2p(trace::CollectiveType t) {
  return t == trace::CollectiveType::kSendRecv || t == trace::CollectiveType::kSend ||
         t == trace::CollectiveType::kRecv;
}

// What one traced instance is an instance of, and what the cost model says it takes.
struct Instance {
  std::string key;      // "" when the trace gives no message size
  double model_us = 0;  // 0 when the model cannot price it
};

// The model's time on the slowest placement the trace allows: within one node when the whole
// job fits in one, else every rank on a node of its own (network-bound), so that a wait is
// declared only when even the slowest link cannot explain the time.
double model_time(const cost::KernelsDb& db, const std::string& gpu_name, int32_t world_size,
                  cost::CollectiveQuery q) {
  if (gpu_name.empty() || q.bytes <= 0 || q.ranks < 2) return 0;
  try {
    const cost::GpuSpec& gpu = db.gpu(gpu_name);
    const cost::Topology& topo = db.default_topology_for(gpu);
    q.ranks_per_node = world_size > 0 && world_size <= topo.gpus_per_node ? q.ranks : 1;
    return cost::collective_time(db, gpu, topo, q).time_us;
  } catch (const InputError&) {
    return 0;  // a layout the model cannot run: no ceiling on the shortest instance
  }
}

Instance instance_of(const TracedKernels& tk, size_t ti, const trace::ClassifiedKernel& k,
                     const cost::KernelsDb& db) {
  Instance in;
  const trace::EventTable& t = *tk.tables[ti];
  const trace::Event& e = t.events[k.event];
  const trace::CollectiveInfo* ci = e.collective >= 0 ? &t.collectives[e.collective] : nullptr;
  double bytes = k.collective ? k.collective->bytes : 0;
  if (bytes <= 0 && ci && ci->in_nelems > 0)
    bytes = static_cast<double>(std::max(ci->in_nelems, ci->out_nelems)) *
            cost::tensor_elem_bytes(ci->dtype.empty() ? "" : ci->dtype);
  if (bytes <= 0) return in;
  const bool p2p = ci && is_p2p(ci->type);
  const int group_size = ci ? ci->group_size : (k.collective ? k.collective->ranks : -1);
  // A send and a receive of one size share a key: they move the same bytes between the same
  // kind of neighbours (the two directions run on groups of their own in some stacks).
  in.key = strprintf("%zu|%s|%.0f|%d|%s", ti,
                     p2p ? "p2p" : (ci ? trace::to_string(ci->type) : t.names[e.name].c_str()),
                     bytes, group_size, p2p || !ci ? "" : ci->process_group.c_str());
  const std::string& gpu = tk.reports[ti].gpu;
  if (p2p) {
    cost::CollectiveQuery q;
    q.op = cost::Collective::kSendRecv;
    q.bytes = bytes;
    q.ranks = 2;
    in.model_us = model_time(db, gpu, t.world_size, q);
  } else if (k.collective) {
    in.model_us = model_time(db, gpu, t.world_size, *k.collective);
  }
  return in;
}

}  // namespace

const char* to_string(TransferFrom f) {
  switch (f) {
    case TransferFrom::kRendezvous:
      return "rendezvous";
    case TransferFrom::kShortest:
      return "shortest instance";
    case TransferFrom::kModel:
      return "cost model";
    case TransferFrom::kUnsized:
      return "no size";
  }
  return "?";
}

const KernelWait* PeerWaits::of(graph::NodeId v) const {
  auto it = std::lower_bound(kernels.begin(), kernels.end(), v,
                             [](const KernelWait& k, graph::NodeId n) { return k.node < n; });
  return it != kernels.end() && it->node == v ? &*it : nullptr;
}

double PeerWaits::transfer_us_of(const graph::Graph& g, graph::NodeId v) const {
  const KernelWait* k = of(v);
  return k ? k->transfer_us : g.dur_us[v];
}

PeerWaits peer_waits(const graph::Graph& g, const TracedKernels& tk, const cost::KernelsDb& db) {
  PeerWaits w;
  // A rendezvous (multi-rank graph) turns each member's kernel into an arrival without duration
  // and a transfer after the last arrival: arrivals are skipped, transfers are measured.
  std::vector<bool> arrival(g.num_nodes(), false), joined(g.num_nodes(), false);
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    for (uint32_t i = g.pred_offset[v]; i < g.pred_offset[v + 1]; ++i)
      if (g.pred_kind[i] == graph::EdgeKind::kCrossRank) {
        if (g.kind[v] == graph::NodeKind::kVirtual)
          arrival[g.pred_index[i]] = true;
        else
          joined[v] = true;
      }
  std::vector<Instance> instance_of_kernel;
  std::unordered_map<std::string, double> shortest_us, model_us;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel || g.cls[v] != graph::NodeClass::kComm || arrival[v])
      continue;
    KernelWait k;
    k.node = v;
    k.traced_us = k.transfer_us = g.dur_us[v];
    size_t ti = 0;
    const trace::ClassifiedKernel* ck = tk.tables.empty() ? nullptr : tk.kernel_of(g, v, &ti);
    Instance in;
    if (joined[v]) {
      k.from = TransferFrom::kRendezvous;
      if (ck)  // the recorded kernel: the wait for the last arrival, then the transfer
        k.traced_us = std::max(g.dur_us[v], tk.tables[ti]->events[ck->event].dur_ns / 1e3);
    } else if (ck) {
      in = instance_of(tk, ti, *ck, db);
      if (!in.key.empty()) {
        auto [it, fresh] = shortest_us.emplace(in.key, k.traced_us);
        if (!fresh) it->second = std::min(it->second, k.traced_us);
        if (in.model_us > 0) model_us[in.key] = in.model_us;
      }
    }
    w.kernels.push_back(k);
    instance_of_kernel.push_back(std::move(in));
  }
  for (size_t i = 0; i < w.kernels.size(); ++i) {
    KernelWait& k = w.kernels[i];
    const std::string& key = instance_of_kernel[i].key;
    if (k.from != TransferFrom::kRendezvous && !key.empty()) {
      double transfer = shortest_us.at(key);
      k.from = TransferFrom::kShortest;
      auto m = model_us.find(key);
      if (m != model_us.end() && transfer > kWaitedFactor * m->second) {
        transfer = m->second;
        k.from = TransferFrom::kModel;
      }
      k.transfer_us = std::min(k.traced_us, transfer);
    }
    k.wait_us = std::max(0.0, k.traced_us - k.transfer_us);
    w.traced_us += k.traced_us;
    w.transfer_us += k.transfer_us;
    w.wait_us += k.wait_us;
    ++w.by_source[static_cast<size_t>(k.from)];
  }
  return w;
}

PeerWaits peer_waits(const graph::Graph& g, const std::vector<const trace::EventTable*>& traces,
                     const cost::KernelsDb& db) {
  bool any = false;  // classifying a large trace costs more than its replay: only when needed
  for (graph::NodeId v = 1; v < g.num_nodes() && !any; ++v)
    any = g.kind[v] == graph::NodeKind::kKernel && g.cls[v] == graph::NodeClass::kComm;
  return any ? peer_waits(g, classify_traced(traces, db), db) : PeerWaits{};
}

}  // namespace lumos::whatif
