// Collective time with NCCL's own algorithm and protocol model (kernels_db/nccl.json, from
// NCCL's tuning.cc): ring, tree, NVLS and NVLSTree with the LL, LL128 and Simple protocols,
// base and per-hop latencies, per-channel bandwidth caps, tree correction and NVLS efficiency;
// the fastest (algorithm, protocol) wins, as in NCCL. Multi-node runs compose the NVLink
// (intra-node) and NIC (inter-node) bandwidths of the topology.
#pragma once
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"

namespace lumos::cost {

enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv
};
enum class CollAlgo { kAuto, kRing, kTree, kNvls, kNvlsTree, kDirect };
enum class CollProto { kLL, kLL128, kSimple };

Collective parse_collective(const std::string& s);  // allreduce, allgather, reducescatter, ...
CollAlgo parse_coll_algo(const std::string& s);     // auto, ring, tree, nvls, nvlstree
const char* to_string(Collective c);
const char* to_string(CollAlgo a);
const char* to_string(CollProto p);

struct CollectiveQuery {
  Collective op = Collective::kAllReduce;
  double bytes = 0;  // nccl-tests "size": the buffer for all-reduce, the gathered total for AG/RS
  int ranks = 1;
  int ranks_per_node = 8;
  CollAlgo algo = CollAlgo::kAuto;
};

struct CollectiveEstimate {
  double time_us = 0;
  double latency_us = 0;
  double algbw_gbps = 0;  // bytes / time
  double busbw_gbps = 0;  // nccl-tests bus bandwidth
  CollAlgo algo = CollAlgo::kRing;
  CollProto proto = CollProto::kSimple;
};

// Throws InputError for impossible queries (no ranks, an algorithm that cannot run the
// collective on this GPU or layout).
CollectiveEstimate collective_time(const KernelsDb& db, const GpuSpec& gpu, const Topology& topo,
                                   const CollectiveQuery& q);

// nccl-tests bus-bandwidth factor for a collective over n ranks (PERFORMANCE.md).
double busbw_factor(Collective c, int n);

}  // namespace lumos::cost
