// The model, layout, GPU and network options of `lumos estimate`, `generate` and `carbon`, and
// the estimate request they describe.
#include "cli/layout_options.hpp"

#include "cli/count_options.hpp"
#include "cli/model_options.hpp"
#include "common/count_text.hpp"
#include "common/error.hpp"
#include "cost/dtype.hpp"
#include "cost/size_units.hpp"

namespace lumos::cli {

using namespace lumos::model;
using estimate::EstimateRequest;

namespace {

// The ranges model::check_layout accepts (parallel_config.hpp).
constexpr int64_t kMaxDegree = int64_t{1} << 16, kMaxBatch = int64_t{1} << 24;
constexpr CountOption kLayoutTp{"tp", 1, kMaxDegree}, kLayoutPp{"pp", 1, kMaxDegree},
    kLayoutDp{"dp", 1, kMaxDegree}, kCp{"cp", 1, kMaxDegree},
    kLayoutInterleave{"interleave", 1, kMaxDegree}, kLayoutMbs{"mbs", 1, kMaxBatch},
    kLayoutGbs{"gbs", 1, kMaxBatch}, kGpusPerNode{"gpus-per-node", 1, 1024};

}  // namespace

void layout_options(cxxopts::Options& o) {
  model_options(o);
  o.add_options()("gpu", "GPU in kernels_db", cxxopts::value<std::string>()->default_value("h100"))(
      "topology", "network topology in kernels_db (default: the GPU's)",
      cxxopts::value<std::string>())(
      "nic-bandwidth", "override: the topology's NIC line rate, with its unit (400Gbps, 50GB/s)",
      cxxopts::value<std::string>())(
      kGpusPerNode.name, count_help("override: the topology's GPUs per node", kGpusPerNode),
      count_value())("nvlink-bandwidth",
                     "override: the GPU's NVLink bandwidth per direction, with its unit (900GB/s)",
                     cxxopts::value<std::string>())(
      kLayoutTp.name, count_help("tensor parallel degree", kLayoutTp), count_value("2"))(
      kLayoutPp.name, count_help("pipeline parallel degree", kLayoutPp), count_value("2"))(
      kLayoutDp.name, count_help("data parallel degree", kLayoutDp), count_value("4"))(
      kCp.name, count_help("context parallel degree", kCp), count_value("1"))(
      kLayoutMbs.name, count_help("micro-batch size (sequences)", kLayoutMbs), count_value("1"))(
      kLayoutGbs.name, count_help("global batch size (sequences)", kLayoutGbs), count_value("64"))(
      kLayoutInterleave.name,
      count_help("virtual pipeline stages per GPU (interleaved 1F1B when > 1)", kLayoutInterleave),
      count_value("1"))("recompute", "none | selective | full",
                        cxxopts::value<std::string>()->default_value("none"))(
      "sp", "sequence parallel")("dist-opt", "distributed optimizer (reduce-scatter + all-gather)")(
      "fsdp", "fully sharded data parallel (weights, gradients and optimizer state sharded)")(
      "split-embedding",
      "count the embedding and the loss as one layer each when splitting layers over stages")(
      "dtype", "GEMM precision: bf16 | fp16 | fp8",
      cxxopts::value<std::string>()->default_value("bf16"))(
      "stack",
      "software stack: megatron-2021, megatron-deepspeed, megatron-core, nemo-2024, nemo-2025, "
      "torchtitan, "
      "torchtitan-compile "
      "(kernels_db/stacks.json; default: megatron-core)",
      cxxopts::value<std::string>())(
      "overlap-grad-reduce",
      "on | off: gradient reduction overlapped with the backward pass or after it (default: "
      "the stack's)",
      cxxopts::value<std::string>())(
      "tp-comm-overlap",
      "on | off: tensor-parallel all-gathers and reduce-scatters pipelined with their GEMMs in "
      "chunks (Transformer Engine userbuffers) (default: the stack's)",
      cxxopts::value<std::string>())(
      "tp-comm-fp8-reduce-scatter",
      "with userbuffers and --dtype fp8: the attention projection and FC2 write FP8 into their "
      "reduce-scatter's buffers, which move 1 B per element (Transformer Engine's fp8_buf, set by "
      "NeMo's FP8 userbuffers configs for H100)")(
      "tp-only-amax-red",
      "with --dtype fp8 and a delayed-scaling stack: FP8 amaxes all-reduced over the tensor and "
      "context-parallel ranks only (Megatron-Core's tp_only_amax_red), not across the "
      "data-parallel replicas, so no reduction waits for the last replica")(
      "defer-embedding-wgrad",
      "N | all | off: the output layer's weight-gradient GEMMs of the first N micro-batches run "
      "after the pipeline's last backward pass, on the last stage (Megatron-Core's "
      "defer_embedding_wgrad_compute with wgrad_deferral_limit N, which NeMo's pipelined Llama "
      "recipes set: 22 on 70B, 50 on 405B; needs --pp > 1) (default: off)",
      cxxopts::value<std::string>())(
      "param-remainders",
      "the optimizer keeps fp32 master weights as the bf16 weights plus 16-bit remainders "
      "(store_param_remainders): 10 B/param of optimizer state in place of 12")(
      "attention",
      "flash2 | flash3 | cudnn: the fused attention kernels, in place of the stack's (a stack "
      "with unfused attention refuses it)",
      cxxopts::value<std::string>())(
      "grad-reduce-in-fp32",
      "on | off: gradients kept and reduced in fp32 or in 16 bit (default: the stack's)",
      cxxopts::value<std::string>())("free-comm",
                                     "idealize: collectives and pipeline messages take no time")(
      "db", "read kernels_db from this folder", cxxopts::value<std::string>())(
      "json", "print JSON")("h,help", "show this help");
}

EstimateRequest request_from(const cxxopts::ParseResult& a) {
  EstimateRequest req;
  req.model = model_from(a);
  ParallelConfig& c = req.cfg;
  c.tp = static_cast<int>(count_of(a, kLayoutTp));
  c.pp = static_cast<int>(count_of(a, kLayoutPp));
  c.dp = static_cast<int>(count_of(a, kLayoutDp));
  c.cp = static_cast<int>(count_of(a, kCp));
  c.mbs = count_of(a, kLayoutMbs);
  c.gbs = count_of(a, kLayoutGbs);
  c.interleave = static_cast<int>(count_of(a, kLayoutInterleave));
  c.recompute = parse_recompute(a["recompute"].as<std::string>());
  c.sequence_parallel = a.count("sp") > 0;
  c.distributed_optimizer = a.count("dist-opt") > 0;
  c.fsdp = a.count("fsdp") > 0;
  c.split_counts_embedding = a.count("split-embedding") > 0;
  c.param_remainders = a.count("param-remainders") > 0;
  c.tp_comm_fp8_reduce_scatter = a.count("tp-comm-fp8-reduce-scatter") > 0;
  c.tp_only_amax_reduction = a.count("tp-only-amax-red") > 0;
  c.dtype = cost::parse_training_dtype(a["dtype"].as<std::string>(), "--dtype");
  estimate::check_settings(c);
  if (a.count("stack")) c.stack = a["stack"].as<std::string>();
  if (a.count("tp-comm-overlap")) {
    const std::string v = a["tp-comm-overlap"].as<std::string>();
    LUMOS_EXPECT(v == "on" || v == "off", "--tp-comm-overlap " + v + ": expected on or off");
    c.tp_comm_overlap = v == "on";
  }
  if (a.count("overlap-grad-reduce")) {
    const std::string v = a["overlap-grad-reduce"].as<std::string>();
    LUMOS_EXPECT(v == "on" || v == "off", "--overlap-grad-reduce " + v + ": expected on or off");
    c.overlap_grad_reduce = v == "on";
  }
  if (a.count("attention")) {
    const std::string v = a["attention"].as<std::string>();
    if (v == "flash2")
      c.attention = cost::AttentionImpl::kFlash2;
    else if (v == "flash3")
      c.attention = cost::AttentionImpl::kFlash3;
    else if (v == "cudnn")
      c.attention = cost::AttentionImpl::kCudnn;
    else
      throw InputError("--attention " + v + ": expected flash2, flash3 or cudnn");
  }
  if (a.count("grad-reduce-in-fp32")) {
    const std::string v = a["grad-reduce-in-fp32"].as<std::string>();
    LUMOS_EXPECT(v == "on" || v == "off", "--grad-reduce-in-fp32 " + v + ": expected on or off");
    c.grad_reduce_in_fp32 = v == "on";
  }
  if (a.count("defer-embedding-wgrad")) {
    const std::string v = a["defer-embedding-wgrad"].as<std::string>();
    if (v == "0")  // Megatron-Core's wgrad_deferral_limit 0 defers every micro-batch
      throw InputError(
          "--defer-embedding-wgrad 0: expected all (every micro-batch, Megatron-Core's "
          "limit 0), off or a count");
    if (v != "off" && v != "all" &&
        (v.empty() || v.find_first_not_of("0123456789") != std::string::npos))
      throw InputError("--defer-embedding-wgrad " + v +
                       ": expected a count of micro-batches, all or off");
    c.deferred_head_wgrads =
        v == "off"   ? 0
        : v == "all" ? ParallelConfig::kAllMicrobatches
                     : common::parse_count(v, "--defer-embedding-wgrad", 1, int64_t{1} << 24);
  }
  req.gpu = a["gpu"].as<std::string>();
  if (a.count("topology")) req.topology = a["topology"].as<std::string>();
  if (a.count("nic-bandwidth"))
    req.nic_gbps =
        cost::parse_bandwidth_gbytes_per_s(a["nic-bandwidth"].as<std::string>(), "--nic-bandwidth");
  if (a.count("gpus-per-node")) {
    req.gpus_per_node = static_cast<int>(count_of(a, kGpusPerNode));
  }
  if (a.count("nvlink-bandwidth"))
    req.nvlink_gbps = cost::parse_bandwidth_gbytes_per_s(a["nvlink-bandwidth"].as<std::string>(),
                                                         "--nvlink-bandwidth");
  req.options.free_comm = a.count("free-comm") > 0;
  return req;
}

}  // namespace lumos::cli
