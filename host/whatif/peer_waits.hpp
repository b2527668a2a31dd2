// How much of a trace's communication time was spent waiting for peers (docs/design.md, "Waits
// are not communication"). An NCCL kernel starts when its own rank calls it and ends when the
// last peer's data has moved, so its recorded time is a wait for the slowest peer plus the
// transfer. Where a folder's rendezvous joined the collective (graph/multi_rank.hpp) the split is
// measured. Elsewhere (one rank's trace, or a collective whose peers were not traced) it is
// estimated per rank: the instances of one collective (same operation, message size, group size
// and group; a send and a receive of the same size count as one) move the same bytes over the
// same links, so the shortest instance is its transfer; when even the shortest instance takes
// more than kWaitedFactor x the cost model's time for it on the slowest placement the job allows,
// every instance waited (a pipeline receive waits for the previous stage in every micro-batch)
// and that model time is the transfer. Each instance's transfer is min(its recorded time, that
// transfer); the rest is wait.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "graph/graph.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::whatif {

// A collective whose shortest instance exceeds this multiple of the cost model's time waited in
// every instance. Loose on purpose: the model prices real NCCL kernels within tens of percent,
// while waits in pipeline receives are tens to hundreds of times the transfer.
constexpr double kWaitedFactor = 2.0;

enum class TransferFrom : uint8_t {
  kRendezvous,  // measured: own end - last arrival of the joined ranks
  kShortest,    // the shortest traced instance of the collective
  kModel,       // the cost model (every instance waited)
  kUnsized,     // no message size in the trace: all of it counted as transfer
};
const char* to_string(TransferFrom f);

struct KernelWait {
  graph::NodeId node = graph::kOrigin;
  double traced_us = 0;    // the kernel's recorded duration
  double transfer_us = 0;  // moving data
  double wait_us = 0;      // waiting for peers: traced - transfer
  TransferFrom from = TransferFrom::kUnsized;
};

struct PeerWaits {
  std::vector<KernelWait> kernels;  // every communication kernel of the graph, by node id
  double traced_us = 0, transfer_us = 0, wait_us = 0;  // summed over `kernels`
  uint32_t by_source[4] = {0, 0, 0, 0};                // kernels per TransferFrom
  // Of the traced communication time, the fraction spent waiting; 0 without communication.
  double wait_fraction() const { return traced_us > 0 ? wait_us / traced_us : 0.0; }
  // The entry of node v, nullptr when v is not a communication kernel.
  const KernelWait* of(graph::NodeId v) const;
  // The time node v moves data or computes: its transfer when it is a communication kernel, else
  // its duration in the graph.
  double transfer_us_of(const graph::Graph& g, graph::NodeId v) const;
};

// Every communication kernel of the graph (built from tk's traces; a multi-rank graph too).
// Kernels of a graph without traces (tk empty) are counted as transfers.
PeerWaits peer_waits(const graph::Graph& g, const TracedKernels& tk, const cost::KernelsDb& db);
// The same, classifying the traces behind g first.
PeerWaits peer_waits(const graph::Graph& g, const std::vector<const trace::EventTable*>& traces,
                     const cost::KernelsDb& db);

}  // namespace lumos::whatif
