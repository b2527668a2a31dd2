// Graph-to-graph edits of a traced job's collectives (Lumos §4): another data-parallel degree
// (`--dp`) or another network (`--topology`, `--nic-gbps`). Each collective of a group whose size
// or network changes takes its traced transfer times model(new) / model(traced), so the trace's
// own NCCL behaviour (algorithm, overlap) stays and only the change is modelled; the time a
// kernel waited for its peers (whatif/peer_waits.hpp) is kept, not scaled. Local
// compute is unchanged, except that the distributed optimizer's step (parameters sharded over
// the data-parallel group) scales with the shard, and that GEMM and attention kernels take the
// job's new slowest GPU (model/slowest_gpu.hpp) against the traced job's. Pipeline sends and
// receives, and the tied embedding all-reduce, are repriced too when the new degree moves their
// pair of ranks onto or off a node (Megatron's rank order). FP8 delayed scaling's amax
// all-reduces span the stage's replicas: they take the new group and the wait for the last of
// the new replicas (model/fp8_amax_reduction.hpp).
#pragma once
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "graph/graph.hpp"
#include "trace/event_table.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::whatif {

struct CollectiveEditRequest {
  int dp = 0;  // new data-parallel degree, 0 = as traced
  const cost::GpuSpec* gpu = nullptr;
  const cost::Topology* traced_topology = nullptr;
  const cost::Topology* topology = nullptr;  // the network to price on
};

struct EditLine {
  std::string what;  // "dp 4 -> 8: 12 collectives of group dp/stage0 repriced"
  uint32_t kernels = 0;
  double traced_us = 0, edited_us = 0;  // summed over the edited kernels
};

// Returns the edited graph (same structure, new durations) and what changed in `lines`.
// Throws InputError naming what is missing: no data-parallel group, a group without a size, a
// collective without a message size.
graph::Graph edit_collectives(const graph::Graph& g, const TracedKernels& tk,
                              const JobStructure& js, const CollectiveEditRequest& req,
                              const cost::KernelsDb& db, std::vector<EditLine>* lines);

}  // namespace lumos::whatif
