// The software stack decides which kernels a layer runs: unfused or flash attention, dropout,
// eager or fused kernels, gradient accumulation, and what selective recompute re-runs.
#include <gtest/gtest.h>

#include <algorithm>

#include "cost/kernels_db.hpp"
#include "cost/memory_model.hpp"
#include "model/memory_footprint.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"

using namespace lumos::model;

namespace {

StepCosts priced(const std::string& stack, const std::string& model, Recompute rc,
                 const std::string& gpu = "a100") {
  const auto& db = lumos::cost::embedded_db();
  ParallelConfig c;
  c.tp = 2, c.mbs = 1, c.gbs = 1, c.recompute = rc, c.stack = stack;
  const ModelSpec m = preset(model);
  const Layout l = check_layout(m, c);
  const auto& g = db.gpu(gpu);
  return price_step(m, c, l, db, g, db.default_topology_for(g));
}

// One micro-batch of an FP8, sequence-parallel layout at tensor degree `tp` under `stack`.
ParallelConfig fp8_sequence_parallel(int tp, const std::string& stack) {
  ParallelConfig c;
  c.tp = tp, c.dp = 1, c.mbs = 1, c.gbs = 1, c.stack = stack;
  c.sequence_parallel = true, c.dtype = lumos::cost::Dtype::kFp8;
  return c;
}

size_t count(const std::vector<KernelOp>& ops, const std::string& part) {
  return static_cast<size_t>(std::count_if(ops.begin(), ops.end(), [&](const KernelOp& op) {
    return op.name.find(part) != std::string::npos;
  }));
}

}  // namespace

TEST(SoftwareStack, Megatron2021RunsUnfusedAttentionWithDropoutAndAccumulatesGradients) {
  const StepCosts k = priced("megatron-2021", "gpt3-15b", Recompute::kSelective);
  EXPECT_EQ(count(k.layer_fwd, "flash"), 0u);
  EXPECT_EQ(count(k.layer_fwd, "attention scores"), 1u);
  EXPECT_EQ(count(k.layer_fwd, "attention over values"), 1u);
  EXPECT_EQ(count(k.layer_fwd, "softmax"), 1u);
  EXPECT_EQ(count(k.layer_fwd, "fused_dropout_kernel (attention)"), 1u);
  EXPECT_EQ(count(k.layer_bwd, "attention scores"), 2u);  // query and key gradients
  EXPECT_EQ(count(k.layer_bwd, "main_grad accumulation"), 1u);
  // Selective recompute re-runs the attention core: the two batched GEMMs, softmax, dropout.
  EXPECT_EQ(k.layer_recompute.size(), 4u);
  for (const KernelOp& op : k.layer_fwd)  // synchronous tensor parallelism: nothing on the side
    EXPECT_FALSE(op.side) << op.name;
}

TEST(SoftwareStack, MegatronCoreRunsFlashAttentionOverlapsTpAndFusesAccumulation) {
  const StepCosts k = priced("megatron-core", "gpt3-15b", Recompute::kSelective, "h100");
  EXPECT_EQ(count(k.layer_fwd, "flash_fwd"), 1u);
  EXPECT_EQ(count(k.layer_fwd, "softmax"), 0u);
  EXPECT_EQ(count(k.layer_bwd, "main_grad accumulation"), 0u);
  EXPECT_TRUE(std::any_of(k.layer_bwd.begin(), k.layer_bwd.end(),
                          [](const KernelOp& op) { return op.side; }));
  ASSERT_EQ(k.layer_recompute.size(), 1u);
  EXPECT_EQ(k.layer_recompute[0].name, "flash_fwd_kernel");
}

TEST(SoftwareStack, TorchtitanRunsEagerKernelsAndRecomputesEveryOtherMatmul) {
  const StepCosts eager = priced("torchtitan", "llama3-8b", Recompute::kSelective, "h100");
  const StepCosts compiled =
      priced("torchtitan-compile", "llama3-8b", Recompute::kSelective, "h100");
  auto dur = [](const std::vector<KernelOp>& ops, const std::string& part) {
    double us = 0;
    for (const KernelOp& op : ops)
      if (op.name.find(part) != std::string::npos) us += op.dur_us;
    return us;
  };
  EXPECT_GT(dur(eager.layer_fwd, "rmsnorm"), 5 * dur(compiled.layer_fwd, "rmsnorm"));
  EXPECT_GT(dur(eager.layer_fwd, "rope"), 3 * dur(compiled.layer_fwd, "rope"));
  // torchtitan's seven matmuls (wq, wk, wv, wo, w1, w3, w2): every second (wk, wo, w3) reruns,
  // with every memory-bound op; flash attention is saved.
  std::vector<const KernelOp*> gemms;
  for (const KernelOp& op : eager.layer_recompute)
    if (op.gemm) gemms.push_back(&op);
  ASSERT_EQ(gemms.size(), 3u);
  const ModelSpec m = preset("llama3-8b");
  EXPECT_EQ(gemms[0]->gemm->n, m.kv_size() / 2);  // tp 2
  EXPECT_NE(gemms[0]->name.find("k projection"), std::string::npos) << gemms[0]->name;
  EXPECT_NE(gemms[1]->name.find("attention out"), std::string::npos) << gemms[1]->name;
  EXPECT_NE(gemms[2]->name.find("fc1 up"), std::string::npos) << gemms[2]->name;
  EXPECT_EQ(gemms[2]->gemm->m * gemms[2]->gemm->n * gemms[2]->gemm->k,
            int64_t{m.seq} * m.hidden * m.ffn / 2);
  EXPECT_EQ(count(eager.layer_recompute, "flash"), 0u);
  EXPECT_GE(count(eager.layer_recompute, "rmsnorm"), 2u);
}

// torchtitan's save list holds reduce_scatter_tensor but not all_gather_into_tensor: under
// sequence parallelism the op-level policy reruns the two gathers of the layer (before QKV and
// before FC1), on the compute stream, and never the reduce-scatters.
TEST(SoftwareStack, TorchtitanSelectiveRecomputeRerunsTheSequenceParallelGathers) {
  const auto& db = lumos::cost::embedded_db();
  ParallelConfig c;
  c.tp = 4, c.mbs = 1, c.gbs = 1, c.recompute = Recompute::kSelective, c.stack = "torchtitan";
  c.sequence_parallel = true;
  const ModelSpec m = preset("llama3-8b");
  const Layout l = check_layout(m, c);
  const auto& g = db.gpu("h100");
  const StepCosts k = price_step(m, c, l, db, g, db.default_topology_for(g));
  auto collectives = [](const std::vector<KernelOp>& ops, lumos::cost::Collective kind) {
    return std::count_if(ops.begin(), ops.end(), [&](const KernelOp& op) {
      return op.group == CommGroup::kTp && op.collective == kind;
    });
  };
  using lumos::cost::Collective;
  ASSERT_EQ(collectives(k.layer_fwd, Collective::kAllGather), 2);
  EXPECT_EQ(collectives(k.layer_recompute, Collective::kAllGather), 2);
  EXPECT_EQ(collectives(k.layer_recompute, Collective::kReduceScatter), 0);
  for (const KernelOp& op : k.layer_recompute) EXPECT_FALSE(op.side) << op.name;
  // DTensor's autograd kept the gathered input (recomputed here): backward gathers only the
  // output gradients of the attention projection and FC2 (the reduce-scatters' backward).
  EXPECT_EQ(collectives(k.layer_bwd, Collective::kAllGather), 2);

  // Megatron's attention-core policy reruns no collective outside the attention, and its QKV and
  // FC1 gather their saved shards again for the weight gradients.
  c.stack = "megatron-core";
  const StepCosts megatron = price_step(m, c, l, db, g, db.default_topology_for(g));
  EXPECT_EQ(collectives(megatron.layer_recompute, Collective::kAllGather), 0);
  EXPECT_EQ(collectives(megatron.layer_bwd, Collective::kAllGather), 4);

  // Without sequence parallelism the policy reruns the layer's all-reduces; compiled, only the
  // one after the attention projection: the one after FC2 comes after the last tensor backward
  // reads, which is where the partitioner's recomputation ends.
  c.stack = "torchtitan";
  c.sequence_parallel = false;
  const StepCosts replicated = price_step(m, c, l, db, g, db.default_topology_for(g));
  ASSERT_EQ(collectives(replicated.layer_fwd, Collective::kAllReduce), 2);
  EXPECT_EQ(collectives(replicated.layer_recompute, Collective::kAllReduce), 2);
  c.stack = "torchtitan-compile";
  const StepCosts compiled = price_step(m, c, l, db, g, db.default_topology_for(g));
  EXPECT_EQ(collectives(compiled.layer_recompute, Collective::kAllReduce), 1);
}

// torch.compile's partitioner recomputes only what backward reads, up to FC2's input (stacks.json
// recompute_early_stop): full recomputation under torchtitan-compile reruns the layer forward up
// to FC2; Megatron's reruns it all, FC2 and the scatter after it included.
TEST(SoftwareStack, CompiledFullRecomputeStopsBeforeFc2) {
  const auto& db = lumos::cost::embedded_db();
  ParallelConfig c;
  c.tp = 4, c.mbs = 1, c.gbs = 1, c.recompute = Recompute::kFull, c.sequence_parallel = true;
  const ModelSpec m = preset("llama3-8b");
  const Layout l = check_layout(m, c);
  const auto& g = db.gpu("h100");
  c.stack = "torchtitan-compile";
  const StepCosts titan = price_step(m, c, l, db, g, db.default_topology_for(g));
  c.stack = "megatron-core";
  const StepCosts megatron = price_step(m, c, l, db, g, db.default_topology_for(g));
  EXPECT_EQ(megatron.layer_recompute.size(), megatron.layer_fwd.size());
  EXPECT_EQ(count(megatron.layer_recompute, "fc2"), 1u);
  ASSERT_FALSE(titan.layer_recompute.empty());
  EXPECT_EQ(count(titan.layer_recompute, "fc2"), 0u);
  EXPECT_EQ(count(titan.layer_recompute, "fc1"), 2u);  // w1 and w3
  // What follows FC2 in forward (its reduce-scatter, the residual add) is not rerun.
  const size_t fc2 = static_cast<size_t>(
      std::find_if(titan.layer_fwd.begin(), titan.layer_fwd.end(),
                   [](const KernelOp& op) { return op.name.find("(fc2)") != std::string::npos; }) -
      titan.layer_fwd.begin());
  ASSERT_LT(fc2, titan.layer_fwd.size());
  EXPECT_EQ(titan.layer_recompute.size(), fc2);
}

// torchtitan's Llama runs wq, wk, wv and w1, w3 as linears of their own where Megatron-Core fuses
// QKV and FC1 (stacks.json separate_projections): the same FLOPs in seven matmuls, not four; one
// gather before them; in backward each input gradient after the first added into the sum before
// the one reduce-scatter; in eager FP8 each linear casts the input itself. A GPT layer keeps its
// fused QKV (MPT's Wqkv under this stack).
TEST(SoftwareStack, TorchtitanRunsItsProjectionsAsMatmulsOfTheirOwn) {
  const auto& db = lumos::cost::embedded_db();
  ParallelConfig c;
  c.tp = 4, c.mbs = 1, c.gbs = 1, c.sequence_parallel = true;
  const ModelSpec m = preset("llama3-8b");
  const Layout l = check_layout(m, c);
  const auto& g = db.gpu("h100");
  auto gemms = [](const std::vector<KernelOp>& ops) {
    std::vector<const KernelOp*> v;
    for (const KernelOp& op : ops)
      if (op.gemm && op.gemm->batch == 1) v.push_back(&op);
    return v;
  };
  auto flops = [&](const std::vector<KernelOp>& ops) {
    double x = 0;
    for (const KernelOp* op : gemms(ops)) x += op->hw_flops;
    return x;
  };
  c.stack = "torchtitan";
  const StepCosts titan = price_step(m, c, l, db, g, db.default_topology_for(g));
  c.stack = "megatron-core";
  const StepCosts megatron = price_step(m, c, l, db, g, db.default_topology_for(g));
  ASSERT_EQ(gemms(titan.layer_fwd).size(), 7u);
  EXPECT_EQ(gemms(megatron.layer_fwd).size(), 4u);
  EXPECT_EQ(gemms(titan.layer_bwd).size(), 14u);
  EXPECT_DOUBLE_EQ(flops(titan.layer_fwd), flops(megatron.layer_fwd));
  EXPECT_DOUBLE_EQ(flops(titan.layer_bwd), flops(megatron.layer_bwd));
  EXPECT_EQ(gemms(titan.layer_fwd)[1]->gemm->n, m.kv_size() / 4);
  EXPECT_EQ(count(titan.layer_bwd, "input gradient sum"), 3u);  // q + k + v, gate + up
  c.stack = "torchtitan-compile";  // Inductor adds each input's gradients in one kernel
  EXPECT_EQ(
      count(price_step(m, c, l, db, g, db.default_topology_for(g)).layer_bwd, "input gradient sum"),
      2u);
  EXPECT_EQ(count(megatron.layer_bwd, "input gradient sum"), 0u);
  using lumos::cost::Collective;
  const auto reduce_scatters =
      std::count_if(titan.layer_bwd.begin(), titan.layer_bwd.end(), [](const KernelOp& op) {
        return op.group == CommGroup::kTp && op.collective == Collective::kReduceScatter;
      });
  EXPECT_EQ(reduce_scatters, 2);
  // Apart, the projections of one input cost more than fused (the term taken out): three reads
  // of it, narrower GEMMs.
  StepCostOptions fused;
  fused.without_terms = 1u << static_cast<int>(Term::kSeparateProjections);
  c.stack = "torchtitan";
  const StepCosts together = price_step(m, c, l, db, g, db.default_topology_for(g), fused);
  EXPECT_EQ(gemms(together.layer_fwd).size(), 4u);
  double apart_us = 0, together_us = 0;
  for (const KernelOp* op : gemms(titan.layer_fwd)) apart_us += op->dur_us;
  for (const KernelOp* op : gemms(together.layer_fwd)) together_us += op->dur_us;
  EXPECT_GT(apart_us, together_us);

  // Eager FP8 (torchao's Float8Linear): one input cast per matmul, weights aside; under sequence
  // parallelism QKV's and FC1's input is cast once on the shard and gathered in FP8.
  auto input_casts = [](const StepCosts& k) {
    size_t n = 0;
    for (const KernelOp& op : k.layer_fwd)
      if (op.name.find("cast") != std::string::npos && op.name.find("weight") == std::string::npos)
        ++n;
    return n;
  };
  ParallelConfig fsdp;
  fsdp.tp = 1, fsdp.dp = 8, fsdp.mbs = 1, fsdp.gbs = 8, fsdp.fsdp = true, fsdp.stack = "torchtitan";
  fsdp.dtype = lumos::cost::Dtype::kFp8;
  EXPECT_EQ(
      input_casts(price_step(m, fsdp, check_layout(m, fsdp), db, g, db.default_topology_for(g))),
      7u);
  c.stack = "torchtitan";
  c.dtype = lumos::cost::Dtype::kFp8;
  const StepCosts fp8 = price_step(m, c, l, db, g, db.default_topology_for(g));
  EXPECT_EQ(count(fp8.layer_fwd, "(shard)"), 2u);
  EXPECT_EQ(input_casts(fp8), 4u);

  // The GPT layer's four matmuls: op-level recomputation reruns the attention projection and FC2.
  ParallelConfig gpt;
  gpt.tp = 2, gpt.mbs = 1, gpt.gbs = 1, gpt.stack = "torchtitan";
  gpt.recompute = Recompute::kSelective;
  const ModelSpec g3 = preset("gpt3-15b");
  const StepCosts mpt =
      price_step(g3, gpt, check_layout(g3, gpt), db, g, db.default_topology_for(g));
  EXPECT_EQ(gemms(mpt.layer_fwd).size(), 4u);
  const auto rerun = gemms(mpt.layer_recompute);
  ASSERT_EQ(rerun.size(), 2u);
  EXPECT_NE(rerun[0]->name.find("attention out"), std::string::npos) << rerun[0]->name;
  EXPECT_NE(rerun[1]->name.find("fc2"), std::string::npos) << rerun[1]->name;
}

// Without recomputation DTensor keeps the gathered inputs of QKV and FC1 where Megatron keeps
// their sequence shards: 2 x 2 s b h x (1 - 1/t) more bytes per layer.
TEST(SoftwareStack, TorchtitanKeepsTheGatheredInputsOfItsColumnParallelLayers) {
  const auto& db = lumos::cost::embedded_db();
  const ModelSpec m = preset("llama3-8b");
  ParallelConfig c;
  c.tp = 4, c.mbs = 1, c.sequence_parallel = true;
  const double sbh = static_cast<double>(m.seq) * m.hidden;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c, &db.stack("torchtitan")) -
                       layer_activation_bytes(m, c, &db.stack("megatron-core")),
                   2 * 2 * sbh * (1 - 1.0 / 4));
  c.recompute = Recompute::kSelective;  // dropped and gathered again in the recomputation
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c, &db.stack("torchtitan")),
                   layer_activation_bytes(m, c, &db.stack("megatron-core")));
}

// Korthikanti et al. 2022, Table 2: without recomputation an unfused attention keeps 5as/h x sbh
// more bytes per layer (softmax output, dropout mask and output); selective recompute drops them.
TEST(SoftwareStack, UnfusedAttentionKeepsTheScoresUnlessRecomputed) {
  const auto& db = lumos::cost::embedded_db();
  const ModelSpec m = preset("gpt3-15b");
  ParallelConfig c;
  c.tp = 2, c.mbs = 2;
  // megatron-2021 runs dropout and megatron-core does not: its two 1-byte masks (2 s b h over t,
  // without sequence parallelism replicated) come on top of the scores.
  const double masks = 2.0 * m.seq * c.mbs * m.hidden;
  const double flash = layer_activation_bytes(m, c, &db.stack("megatron-core"));
  const double unfused = layer_activation_bytes(m, c, &db.stack("megatron-2021"));
  EXPECT_DOUBLE_EQ(unfused - flash, 5.0 * m.heads * m.seq * m.seq * 2 / 2 + masks);
  c.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c, &db.stack("megatron-2021")),
                   layer_activation_bytes(m, c, &db.stack("megatron-core")) + masks);
}

// Tied embeddings (GPT): the first and last stage all-reduce the embedding's gradients before the
// optimizer, and meet there; untied models (Llama) and single-stage pipelines have no such step.
TEST(SoftwareStack, TiedEmbeddingGradientsAreAllReducedBetweenFirstAndLastStage) {
  const auto& db = lumos::cost::embedded_db();
  auto embedding_comms = [&](const std::string& model, int pp) {
    ParallelConfig c;
    c.tp = 2, c.pp = pp, c.mbs = 1, c.gbs = 4;
    ModelSpec m = preset(model);
    m.layers = 4;
    const Layout l = check_layout(m, c);
    const auto& g = db.gpu("h100");
    const StepCosts k = price_step(m, c, l, db, g, db.default_topology_for(g));
    const StepGraph sg = build_step_graph(m, c, l, k);
    std::vector<std::string> found;
    for (const auto& r : sg.comms)
      if (r.process_group.rfind("embedding/", 0) == 0) {
        found.push_back(r.process_group);
        EXPECT_EQ(r.collective, "allreduce");
        EXPECT_EQ(r.group_size, 2);
        EXPECT_EQ(r.in_nelems, l.padded_vocab / 2 * m.hidden);
      }
    return found;
  };
  EXPECT_EQ(embedding_comms("gpt3-15b", 4),
            (std::vector<std::string>{"embedding/stage0-stage3", "embedding/stage0-stage3"}));
  EXPECT_TRUE(embedding_comms("gpt3-15b", 1).empty());
  EXPECT_TRUE(embedding_comms("llama3-8b", 4).empty());
}

// The first and last stage share NVLink when the whole job fits in one node, not otherwise.
TEST(SoftwareStack, EmbeddingAllReduceCrossesTheNetworkOnlyWhenStagesAreOnOtherNodes) {
  const auto& db = lumos::cost::embedded_db();
  auto embedding_us = [&](int tp, int pp, int dp) {
    ParallelConfig c;
    c.tp = tp, c.pp = pp, c.dp = dp, c.mbs = 1, c.gbs = 4 * dp;
    ModelSpec m = preset("gpt3-15b");
    m.layers = 8;
    const Layout l = check_layout(m, c);
    const auto& g = db.gpu("h100");
    return price_step(m, c, l, db, g, db.default_topology_for(g)).embedding_allreduce.dur_us;
  };
  EXPECT_GT(embedding_us(2, 4, 1), 0);                            // 8 GPUs: one node
  EXPECT_LT(embedding_us(2, 4, 1), 0.5 * embedding_us(2, 4, 2));  // 16 GPUs: across nodes
}

// NeMo's and Megatron-Bridge's FP8 recipes keep the weights in FP8 (fp8_param_gather), so the
// distributed optimizer gathers 1 B per parameter; Megatron-LM's default, and every BF16 job,
// gather the 16-bit weights.
TEST(SoftwareStack, NemoFp8RecipesGatherFp8WeightsAndMegatronCoreGathersBf16) {
  const auto& db = lumos::cost::embedded_db();
  auto gather_us = [&](const std::string& stack, lumos::cost::Dtype dt) {
    ParallelConfig c;
    c.tp = 8, c.dp = 16, c.mbs = 1, c.gbs = 16, c.stack = stack, c.dtype = dt;
    c.sequence_parallel = c.distributed_optimizer = true;
    const ModelSpec m = preset("llama3-70b");
    const Layout l = check_layout(m, c);
    const auto& g = db.gpu("h100");
    const StepCosts k = price_step(m, c, l, db, g, db.default_topology_for(g));
    return k.param_gather(1e9).dur_us;
  };
  using lumos::cost::Dtype;
  const double bf16 = gather_us("nemo-2024", Dtype::kBf16);
  EXPECT_LT(gather_us("nemo-2024", Dtype::kFp8), 0.6 * bf16);
  EXPECT_LT(gather_us("nemo-2025", Dtype::kFp8), 0.6 * bf16);
  EXPECT_DOUBLE_EQ(gather_us("megatron-core", Dtype::kFp8), bf16);
  EXPECT_DOUBLE_EQ(gather_us("megatron-core", Dtype::kBf16), bf16);
}

// Under Megatron-Core only the norm before QKV and FC1 is Transformer Engine's and writes FP8:
// the SwiGLU is Megatron's own bf16 kernel, so FC2's input and FC1's output gradient are cast by
// kernels of their own (4 B per element under delayed scaling), where a stack whose activation
// quantizes (norm_and_activation) leaves only the transposes.
TEST(SoftwareStack, MegatronCastsTheActivationOutputAndGradientInKernelsOfTheirOwn) {
  lumos::cost::KernelsDb db = lumos::cost::embedded_db();
  const ParallelConfig c = fp8_sequence_parallel(4, "megatron-core");
  const ModelSpec m = preset("llama3-70b");
  const Layout l = check_layout(m, c);
  const auto& g = db.gpu("h100");
  auto cast_us = [&](const std::vector<KernelOp>& ops) {
    double us = 0;
    for (const KernelOp& op : ops)
      if (op.name.rfind("cast_transpose_fp8_kernel", 0) == 0 && !op.first_microbatch_only)
        us += op.dur_us;
    return us;
  };
  const StepCosts norm = price_step(m, c, l, db, g, db.default_topology_for(g));
  db.stacks.at("megatron-core").fp8_cast_fusion = lumos::cost::Fp8CastFusion::kNormAndActivation;
  const StepCosts both = price_step(m, c, l, db, g, db.default_topology_for(g));
  ASSERT_EQ(db.stack("megatron-core").fp8.input_cast_bytes, 4);
  // Forward: the attention projection's input (q / tp = 2048 per token) alone with the activation
  // fused; FC2's input (ffn / tp = 7168 per token) beside it without.
  EXPECT_GT(cast_us(norm.layer_fwd), 1.8 * cast_us(both.layer_fwd));
  // Backward: FC1's output gradient (2 x 7168 per token) joins QKV's (FC2's and the
  // projection's, gathered, are cast on the shard: below).
  EXPECT_GT(cast_us(norm.layer_bwd), 1.5 * cast_us(both.layer_bwd));
}

// Under sequence parallelism a tensor that is gathered in FP8 is quantized on the rank's shard,
// data only, and transposed once gathered (Transformer Engine's grad_output_preprocess and
// LayerNormLinear): the output gradients of the attention projection and FC2 are cast by a
// kernel of 3 B per element of the shard (T / tp rows) and transposed at 2 B per element of all
// T rows, in place of one cast-transpose of 4 B over all T rows; the norm before QKV and FC1
// writes FP8 on its shard (1 B less) and the gathered input is transposed.
TEST(SoftwareStack, SequenceParallelFp8TensorsAreCastOnTheShardAndTransposedOnceGathered) {
  const auto& db = lumos::cost::embedded_db();
  ParallelConfig c = fp8_sequence_parallel(8, "nemo-2024");
  const ModelSpec m = preset("llama3-405b");
  const Layout l = check_layout(m, c);
  const auto& g = db.gpu("h100");
  const StepCosts k = price_step(m, c, l, db, g, db.default_topology_for(g));
  const auto& fp8 = db.stack("nemo-2024").fp8;
  ASSERT_EQ(fp8.gathered_cast_bytes, 3);
  ASSERT_EQ(fp8.gathered_fused_cast_bytes, -1);
  ASSERT_EQ(fp8.gathered_transpose_bytes, 2);
  const double factor = db.stack("nemo-2024").kernel_time_factor;
  const double T = static_cast<double>(l.tokens_per_microbatch), h = m.hidden;
  auto us = [&](double bytes) {
    return lumos::cost::membound_time_us(db, g, "elementwise", bytes) * factor;
  };
  auto durations = [](const std::vector<KernelOp>& ops, const std::string& name) {
    std::vector<double> d;
    for (const KernelOp& op : ops)
      if (op.name == name) d.push_back(op.dur_us);
    return d;
  };
  const auto shard = durations(k.layer_bwd, "cast_fp8_kernel (shard)");
  ASSERT_EQ(shard.size(), 2u);  // the attention projection's and FC2's output gradients
  for (double d : shard) EXPECT_NEAR(d, us(3 * T / 8 * h), 1e-6);
  const auto transposes = durations(k.layer_bwd, "fp8_transpose_kernel");
  ASSERT_EQ(transposes.size(), 2u);
  for (double d : transposes) EXPECT_NEAR(d, us(2 * T * h), 1e-6);
  const auto inputs = durations(k.layer_fwd, "fp8_transpose_kernel");
  ASSERT_EQ(inputs.size(), 2u);  // QKV's and FC1's inputs, from the norm
  for (double d : inputs) EXPECT_NEAR(d, us(2 * T * h - T / 8 * h), 1e-6);
  // Without sequence parallelism nothing is gathered: one cast-transpose over all T rows.
  c.sequence_parallel = false;
  const StepCosts full = price_step(m, c, check_layout(m, c), db, g, db.default_topology_for(g));
  EXPECT_EQ(count(full.layer_bwd, "(shard)"), 0u);
  EXPECT_EQ(durations(full.layer_fwd, "fp8_transpose_kernel").size(), 2u);
  for (double d : durations(full.layer_fwd, "fp8_transpose_kernel"))
    EXPECT_NEAR(d, us(fp8.fused_input_cast_bytes * T * h), 1e-6);
}

// Where the stack keeps the weights in FP8 (NeMo's fp8_param_gather: Transformer Engine's FP8
// primary weights) the first micro-batch only transposes each weight (2 B per element); where
// the weights are 16 bit it casts and transposes them (delayed scaling: 4 B). Either runs on the
// first micro-batch only.
TEST(SoftwareStack, Fp8PrimaryWeightsAreTransposedNotCastOnTheFirstMicrobatch) {
  const auto& db = lumos::cost::embedded_db();
  const ModelSpec m = preset("llama3-70b");
  const auto& g = db.gpu("h100");
  auto weight_ops = [&](const std::string& stack) {
    const ParallelConfig c = fp8_sequence_parallel(4, stack);
    const StepCosts k = price_step(m, c, check_layout(m, c), db, g, db.default_topology_for(g));
    std::vector<KernelOp> out;
    for (const KernelOp& op : k.layer_fwd)
      if (op.first_microbatch_only) out.push_back(op);
    return out;
  };
  ASSERT_TRUE(db.stack("nemo-2024").fp8_param_gather);
  ASSERT_FALSE(db.stack("megatron-core").fp8_param_gather);
  ASSERT_EQ(db.stack("nemo-2024").fp8.primary_weight_bytes, 2);
  ASSERT_EQ(db.stack("megatron-core").fp8.weight_cast_bytes, 4);
  const auto fp8_weights = weight_ops("nemo-2024"), bf16_weights = weight_ops("megatron-core");
  // Llama 3 70B at TP 4, weights N x K per rank: QKV, the attention projection, FC1, FC2.
  const double weights[4] = {2560.0 * 8192, 8192.0 * 2048, 14336.0 * 8192, 8192.0 * 7168};
  const double factor = db.stack("nemo-2024").kernel_time_factor;
  ASSERT_EQ(factor, db.stack("megatron-core").kernel_time_factor);
  auto us = [&](double bytes) {
    return lumos::cost::membound_time_us(db, g, "elementwise", bytes) * factor;
  };
  ASSERT_EQ(fp8_weights.size(), 4u);
  ASSERT_EQ(bf16_weights.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(fp8_weights[i].name, "fp8_transpose_kernel (FP8 weight)");
    EXPECT_NEAR(fp8_weights[i].dur_us, us(2 * weights[i]), 1e-6) << i;
    EXPECT_EQ(bf16_weights[i].name, "cast_transpose_fp8_kernel (weight)");
    EXPECT_NEAR(bf16_weights[i].dur_us, us(4 * weights[i]), 1e-6) << i;
  }
}
