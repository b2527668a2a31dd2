// The amax reduction of Transformer Engine's delayed scaling (docs/design.md, "FP8 recipes"):
// at the end of each model chunk's forward and backward pass, every rank of a pipeline stage
// all-reduces (MAX) the amaxes of every FP8 module it holds, one small message across the
// tensor x context x data-parallel group, on the compute stream, then updates their amax
// histories and scales. The all-reduce waits for the last data-parallel replica to reach it.
#pragma once
#include <cstdint>

#include "cost/kernels_db.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"

namespace lumos::model {

// The ranks delayed scaling's amax all-reduce spans (Megatron-Core's amax reduction group:
// tensor x context x data parallel, or tensor x context with tp_only_amax_red), and of them the
// data-parallel replicas whose arrival it waits for (1 with tp_only_amax_red).
int64_t amax_reduction_ranks(const ParallelConfig& c);
int amax_reduction_replicas(const ParallelConfig& c);

// The layers of one model chunk: a pipeline stage's layers over its virtual stages, at least 1.
double layers_per_model_chunk(const ParallelConfig& c, int64_t layers);

// One amax all-reduce of `bytes` over `ranks` (the tensor and context ranks of a replica fill a
// node first, Megatron's rank order) that waits for the last of `replicas`: NCCL's time plus
// replica_skew_us x the expected maximum of `replicas` normals. 0 for one rank.
double amax_all_reduce_us(const cost::KernelsDb& db, const cost::GpuSpec& gpu,
                          const cost::Topology& topo, double bytes, int64_t ranks, int replicas,
                          double replica_skew_us);

// One layer's share of a chunk's amax all-reduce, for one pass (forward or backward): the
// reduction's time over the chunk's layers. A chunk's layers run back to back on the compute
// stream, so the shares add up to the reduction where it sits, before the chunk's pipeline send.
// The reduction's time is NCCL's plus, `with_replica_skew`, the wait for the last data-parallel
// replica (recipe.replica_skew_us).
// Zero time when the recipe reduces no amaxes, the group is one rank, or `free_comm`.
KernelOp fp8_amax_reduction_share(const cost::KernelsDb& db, const cost::GpuSpec& gpu,
                                  const cost::Topology& topo, const cost::Fp8Recipe& recipe,
                                  const ParallelConfig& c, int64_t layers, bool free_comm,
                                  bool with_replica_skew);

}  // namespace lumos::model
