#include "model/fp8_amax_reduction.hpp"

#include <algorithm>

#include "cost/collective_model.hpp"
#include "model/slowest_gpu.hpp"

namespace lumos::model {

namespace {
// FP8 GEMMs of a layer (QKV, attention projection, FC1, FC2) and the amaxes each keeps: input,
// weight and output in forward, output gradient and input gradient in backward (Transformer
// Engine's fp8_meta scaling_fwd / scaling_bwd), 4 B each. The forward's message is priced for
// both passes: the backward's is two thirds of it, and both are latency-bound.
constexpr double kAmaxBytesPerLayer = 4.0 * 3 * 4;
}  // namespace

int amax_reduction_replicas(const ParallelConfig& c) {
  return c.tp_only_amax_reduction ? 1 : c.dp;
}

int64_t amax_reduction_ranks(const ParallelConfig& c) {
  return int64_t{c.tp} * c.cp * amax_reduction_replicas(c);
}

double layers_per_model_chunk(const ParallelConfig& c, int64_t layers) {
  const int64_t chunks = std::max<int64_t>(1, int64_t{c.pp} * c.interleave);
  return std::max(1.0, static_cast<double>(layers) / chunks);
}

double amax_all_reduce_us(const cost::KernelsDb& db, const cost::GpuSpec& gpu,
                          const cost::Topology& topo, double bytes, int64_t ranks, int replicas,
                          double replica_skew_us) {
  if (ranks < 2) return 0;
  cost::CollectiveQuery q;
  q.op = cost::Collective::kAllReduce;
  q.bytes = bytes;
  q.ranks = static_cast<int>(ranks);
  q.ranks_per_node = static_cast<int>(std::min<int64_t>(ranks, std::max(1, topo.gpus_per_node)));
  // The reduction is a barrier across the stage's data-parallel replicas, which reach it at
  // times that spread by replica_skew_us: it ends after the last of them, e_dp standard
  // deviations after the mean (the replicas of one stage are otherwise identical; docs/design.md,
  // "Replica skew at amax reductions").
  return cost::collective_time(db, gpu, topo, q).time_us +
         replica_skew_us * expected_max_of_normals(replicas);
}

KernelOp fp8_amax_reduction_share(const cost::KernelsDb& db, const cost::GpuSpec& gpu,
                                  const cost::Topology& topo, const cost::Fp8Recipe& recipe,
                                  const ParallelConfig& c, int64_t layers, bool free_comm,
                                  bool with_replica_skew) {
  KernelOp op;
  op.name = "ncclDevKernel_AllReduce_Max_f32 (fp8 amax)";
  // Filed, in generated traces and trace what-ifs, under the widest parallelism it spans: the
  // data-parallel group, or with tp_only_amax_red the tensor-parallel one (context-parallel
  // where the tensor-parallel degree is 1).
  op.group = !c.tp_only_amax_reduction ? CommGroup::kDp
             : c.tp > 1                ? CommGroup::kTp
                                       : CommGroup::kCp;
  op.collective = cost::Collective::kAllReduce;
  // Megatron-Core's amax reduction group: every rank of the pipeline stage (tensor, context and
  // data parallel; tensor and context with tp_only_amax_red), in Megatron's rank order (tp, cp,
  // dp innermost first).
  const int64_t ranks = amax_reduction_ranks(c);
  op.group_size = static_cast<int>(ranks);
  const double layers_per_chunk = layers_per_model_chunk(c, layers);
  // Transformer Engine keeps one amax buffer per recipe and group, which every FP8 module of the
  // rank joins once: each reduction carries the amaxes of all the stage's layers, of every
  // virtual stage, not only the chunk that ran.
  const double stage_layers = std::max(1.0, static_cast<double>(layers) / std::max(1, c.pp));
  const double bytes = kAmaxBytesPerLayer * stage_layers;
  op.nelems = op.out_nelems = static_cast<int64_t>(bytes / 4);
  if (recipe.amax_reductions_per_pass <= 0 || ranks < 2 || free_comm) return op;
  const double us = amax_all_reduce_us(db, gpu, topo, bytes, ranks, amax_reduction_replicas(c),
                                       with_replica_skew ? recipe.replica_skew_us : 0);
  op.dur_us = us * recipe.amax_reductions_per_pass / layers_per_chunk;
  return op;
}

}  // namespace lumos::model
