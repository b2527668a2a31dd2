#include "estimate/published_runs.hpp"

namespace lumos::estimate {

using namespace lumos::model;
namespace {

PublishedRun run(std::string label, std::string source, double tflops, std::string note,
                 const std::string& model, int tp, int cp, int pp, int dp, int v, int64_t mbs,
                 int64_t gbs, bool split, bool fsdp = false) {
  PublishedRun r;
  r.label = std::move(label);
  r.source = std::move(source);
  r.model_tflops_per_gpu = tflops;
  r.note = std::move(note);
  EstimateRequest& q = r.request;
  q.model = preset(model);
  q.gpu = "h100";
  ParallelConfig& c = q.cfg;
  c.tp = tp, c.cp = cp, c.pp = pp, c.dp = dp, c.interleave = v, c.mbs = mbs, c.gbs = gbs;
  // The recipes: FP8 GEMMs, sequence parallel whenever TP > 1, distributed optimizer, no
  // recomputation, gradient reduction and parameter gathering overlapped.
  c.dtype = cost::Dtype::kFp8;
  c.sequence_parallel = tp > 1;
  c.distributed_optimizer = !fsdp;
  c.fsdp = fsdp;
  c.split_counts_embedding = split;
  r.options = "--model " + model + " --gpu h100 --tp " + std::to_string(tp) + " --cp " +
              std::to_string(cp) + " --pp " + std::to_string(pp) + " --dp " + std::to_string(dp) +
              (v > 1 ? " --interleave " + std::to_string(v) : std::string()) + " --mbs " +
              std::to_string(mbs) + " --gbs " + std::to_string(gbs) + (tp > 1 ? " --sp" : "") +
              (fsdp ? " --fsdp" : " --dist-opt") + " --dtype fp8" +
              (split ? " --split-embedding" : "");
  return r;
}

}  // namespace

const std::vector<PublishedRun>& published_runs() {
  static const std::vector<PublishedRun> runs = {
      run("Llama3-8B, 8 GPUs, 25.11", "Megatron-Bridge docs/performance-summary.md (C §1.2)", 744,
          "Megatron-FSDP, modelled as per-layer gathers and reduce-scatters (--fsdp)", "llama3-8b",
          1, 1, 1, 8, 1, 1, 128, false, true),
      run("Llama3-70B, 64 GPUs, 25.11", "Megatron-Bridge docs/performance-summary.md (C §1.2)", 719,
          "", "llama3-70b", 4, 1, 8, 2, 5, 1, 128, false),
      run("Llama3-70B, 64 GPUs, 26.02", "Megatron-Bridge docs/performance-summary.md (C §1.2)", 728,
          "", "llama3-70b", 4, 1, 8, 2, 5, 1, 256, false),
      run("Llama3.1-405B, 1024 GPUs, 25.11", "Megatron-Bridge docs/performance-summary.md (C §1.2)",
          737, "", "llama3-405b", 8, 2, 8, 8, 8, 1, 512, true),
      run("Llama3.1-405B, 1024 GPUs, 26.02", "Megatron-Bridge docs/performance-summary.md (C §1.2)",
          784, "", "llama3-405b", 8, 2, 8, 8, 8, 1, 1536, true),
      run("GPT-3 175B, 128 GPUs, NeMo 24.07",
          "NVIDIA/NeMo docs/source/performance/performance_summary.md @070a0bb", 782,
          "another indexed copy of the page prints 745", "gpt3-175b", 4, 1, 8, 4, 6, 1, 256, false),
      run("GPT-3 175B, 512 GPUs, NeMo 24.07",
          "NVIDIA/NeMo docs/source/performance/performance_summary.md @070a0bb", 842,
          "another indexed copy of the page prints 895", "gpt3-175b", 4, 1, 8, 16, 6, 2, 2048,
          false),
  };
  return runs;
}

}  // namespace lumos::estimate
