// One graph over several ranks' traces of the same step(s): per-rank graphs joined at the
// collectives. Each collective instance becomes a rendezvous: every rank's NCCL kernel "arrives"
// when its own predecessors are done, a virtual node waits for the last arrival, and each rank
// then spends only its transfer time; the waits come out of the rendezvous, not the recording.
#pragma once
#include <string>
#include <vector>

#include "graph/graph_builder.hpp"
#include "trace/event_table.hpp"

namespace lumos::graph {

struct CollectiveInstance {
  std::string name;                // kernel name on the first rank
  std::vector<size_t> rank_index;  // the members: indices into MultiRankResult::ranks
  std::vector<NodeId> arrive;      // per member: the arrival node
  std::vector<NodeId> transfer;    // per member: the transfer node
  NodeId rendezvous = kOrigin;
  std::vector<double> wait_us;      // per member, measured: last arrival - own start
  std::vector<double> transfer_us;  // per member, measured: own end - last arrival
};

struct MultiRankResult {
  Graph graph;                         // steps carry their rank; resources carry their rank
  std::vector<int32_t> ranks;          // rank id of each input, in input order
  std::vector<double> clock_shift_us;  // applied to each rank to align collective ends
  std::vector<CollectiveInstance> collectives;
  std::vector<std::string> paths;
  // Problems accepted with allow_partial (missing ranks, unreadable rank files), one line each,
  // for the command to print.
  std::vector<std::string> warnings;
};

// Traces of one job, one per rank (any order; distributedInfo.rank or the input position names
// the rank). Kernels with NCCL args meet by (process group, sequence number), the others by
// their order of issue. Throws InputError when ranks without NCCL args issued different numbers
// of NCCL kernels (their order cannot then be matched).
MultiRankResult build_multi_rank(std::vector<trace::EventTable> tables,
                                 const BuildOptions& opt = {});

// Loads every *.json / *.json.gz in a folder (sorted by name) and builds the multi-rank graph.
// The folder must hold one job, complete: InputError when a rank file is a broken link or not a
// regular file, when traces declare different jobs (distributedInfo world sizes or traced-rank
// lists differ, or some declare none), when a rank lies outside the world, or when ranks of the
// declared world have no trace (all of 0..world_size-1, or the distributedInfo
// lumos_traced_ranks the traces list). With allow_partial, broken or odd rank files are skipped
// and missing ranks accepted, each named in `warnings`; different jobs stay an error.
// `tables`, when given, receives a copy of every rank's trace (in file order).
MultiRankResult load_multi_rank(const std::string& dir, bool allow_partial = false,
                                std::vector<trace::EventTable>* tables = nullptr);

}  // namespace lumos::graph
