// lumos cost gemm|attention|collective|memory|optimizer|memcpy|classify|gpus: the kernel and
// collective cost model from the command line, as text or JSON (classify in cost_classify.cpp,
// collective in cost_collective.cpp).
#include <cxxopts.hpp>

#include <cmath>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/cost_classify.hpp"
#include "cli/cost_collective.hpp"
#include "cli/cost_options.hpp"
#include "cli/help_text.hpp"
#include "cli/input_options.hpp"
#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/memory_model.hpp"
#include "cost/size_units.hpp"
#include "report/cost_report.hpp"

namespace lumos::cli {
namespace {

using namespace lumos::cost;

// The cost models' own limits (gemm_model.cpp, attention_model.cpp): FLOPs stay far inside a
// double.
constexpr int64_t kMaxGemmDim = int64_t{1} << 31, kMaxQuerySize = int64_t{1} << 24;
constexpr CountOption kM{"m", 1, kMaxGemmDim}, kN{"n", 1, kMaxGemmDim}, kK{"k", 1, kMaxGemmDim},
    kBatch{"batch", 1, kMaxQuerySize}, kAttentionHeads{"heads", 1, kMaxQuerySize},
    kAttentionSeq{"seq", 1, kMaxQuerySize}, kHeadDim{"head-dim", 1, kMaxQuerySize};

int cost_gemm(int argc, char** argv) {
  CostOptions c("lumos cost gemm", "Time of a GEMM C[M,N] = A[M,K] B[K,N] on one GPU.");
  c.o.add_options()(kM.name, count_help("M", kM), count_value())(
      kN.name, count_help("N", kN), count_value())(kK.name, count_help("K", kK), count_value())(
      kBatch.name, count_help("independent GEMMs (bmm)", kBatch), count_value("1"))(
      "dtype", "fp32, tf32, bf16, fp16 or fp8", arg<std::string>("bf16"))(
      "no-points", "ignore measured points; use the fitted model only");
  if (!c.parse(argc, argv,
               {"lumos cost gemm --m 8192 --n 8192 --k 8192 --gpu h100",
                "lumos cost gemm --m 4096 --n 4096 --k 4096 --dtype fp8 --json"}))
    return 0;
  const GpuSpec& gpu = c.gpu();
  const GemmQuery q{c.positive(kM), c.positive(kN), c.positive(kK), c.positive(kBatch),
                    parse_dtype(c.str("dtype"))};
  // The model counts output tiles in 64-bit integers: the output stays within 2^53 elements
  // (18 PB in bf16), each dimension within its own range.
  const double outputs =
      static_cast<double>(q.m) * static_cast<double>(q.n) * static_cast<double>(q.batch);
  LUMOS_EXPECT(outputs <= 9007199254740992.0,
               strprintf("lumos cost gemm: M x N x batch is %.3g output elements; at most 2^53 "
                         "(9.01e15) are priced",
                         outputs));
  return c.render(report::gemm_json, report::gemm_text, gpu, q,
                  gemm_time(*c.db, gpu, q, !c.has("no-points")));
}

int cost_attention(int argc, char** argv) {
  CostOptions c("lumos cost attention", "Time of FlashAttention forward or backward.");
  c.o.add_options()(kBatch.name, count_help("batch", kBatch), count_value())(
      kAttentionHeads.name, count_help("heads", kAttentionHeads), count_value())(
      kAttentionSeq.name, count_help("sequence length", kAttentionSeq), count_value())(
      kHeadDim.name, count_help("head dim", kHeadDim), count_value("128"))("causal", "causal mask")(
      "pass", "fwd or bwd", arg<std::string>("fwd"))("dtype", "bf16, fp16 or fp8",
                                                     arg<std::string>("bf16"))(
      "impl", "flash3, cudnn or flash2 (Ampere answers every one as flash2)",
      arg<std::string>("flash3"));
  if (!c.parse(argc, argv,
               {"lumos cost attention --batch 1 --heads 64 --seq 8192 --causal",
                "lumos cost attention --batch 4 --heads 32 --seq 4096 --pass bwd --gpu b200"}))
    return 0;
  const GpuSpec& gpu = c.gpu();
  const std::string pass = c.str("pass"), impl = c.str("impl");
  LUMOS_EXPECT(
      impl == "flash3" || impl == "cudnn" || impl == "flash2",
      "lumos cost attention: --impl: expected flash3, cudnn or flash2, got '" + impl + "'");
  LUMOS_EXPECT(pass == "fwd" || pass == "bwd",
               "lumos cost attention: --pass: expected fwd or bwd, got '" + pass + "'");
  AttentionQuery q{c.positive(kBatch),
                   c.positive(kAttentionHeads),
                   c.positive(kAttentionSeq),
                   c.positive(kHeadDim),
                   c.has("causal"),
                   pass == "bwd",
                   parse_dtype(c.str("dtype"))};
  q.impl = impl == "flash3"  ? AttentionImpl::kFlash3
           : impl == "cudnn" ? AttentionImpl::kCudnn
                             : AttentionImpl::kFlash2;
  return c.render(report::attention_json, report::attention_text, gpu, q,
                  attention_time(*c.db, gpu, q));
}

int cost_memory(int argc, char** argv) {  // memory, optimizer or memcpy, as argv[0] says
  const std::string what = argv[0];
  CostOptions c("lumos cost " + what,
                what == "memory"      ? "Time of a memory-bound kernel moving --bytes."
                : what == "optimizer" ? "Time of a fused optimizer step over --params parameters."
                                      : "Time of a memcpy.");
  c.o.add_options()("class", "norm, softmax, loss, elementwise, embedding, optimizer, reduce",
                    arg<std::string>("elementwise"))("bytes", "bytes moved", arg<std::string>())(
      "params", "parameters (optimizer)", decimal_value())("direction", "h2d, d2h or d2d (memcpy)",
                                                           arg<std::string>("h2d"));
  if (!c.parse(argc, argv,
               {"lumos cost memory --class norm --bytes 256MiB",
                "lumos cost optimizer --params 7e9 --gpu h200",
                "lumos cost memcpy --bytes 1GiB --direction d2h"}))
    return 0;
  const GpuSpec& gpu = c.gpu();
  const double params = decimal_if(c.a, "params", "lumos cost").value_or(0);
  LUMOS_EXPECT(what != "optimizer" || params > 0,
               "lumos cost optimizer: missing or non-positive --params");
  LUMOS_EXPECT(std::isfinite(params) && params <= 1e15,
               "lumos cost optimizer: --params must be at most 1e15 (the largest modelled size)");
  LUMOS_EXPECT(what == "optimizer" || c.has("bytes"), "lumos cost " + what + ": missing --bytes");
  const double bytes = what == "optimizer" ? 0 : parse_bytes(c.str("bytes"), "--bytes");
  const double us = what == "optimizer" ? optimizer_time_us(*c.db, gpu, params)
                    : what == "memory"  ? membound_time_us(*c.db, gpu, c.str("class"), bytes)
                                        : memcpy_time_us(*c.db, gpu, bytes,
                                                         parse_copy_direction(c.str("direction")));
  return c.render(report::kernel_time_json, report::kernel_time_text, gpu, what, us);
}

int cost_gpus(int argc, char** argv) {
  CostOptions c("lumos cost gpus", "List the GPUs of kernels_db.");
  if (!c.parse(argc, argv, {"lumos cost gpus", "lumos cost gpus --db my_kernels_db"})) return 0;
  // The list is every GPU; a --gpu given is still checked, so a misspelt one is not taken in.
  if (c.has("gpu")) c.gpu();
  report::gpus_text(std::cout, *c.db);
  return 0;
}

}  // namespace

int cmd_cost(int argc, char** argv) {
  const std::string usage =
      "usage: lumos cost <kind> [options]\n\n"
      "kinds:\n"
      "  gemm        time of a GEMM on one GPU\n"
      "  attention   time of FlashAttention forward or backward\n"
      "  collective  time of an NCCL collective (NCCL's algorithm and protocol model)\n"
      "  memory      time of a memory-bound kernel moving --bytes\n"
      "  optimizer   time of a fused optimizer step over --params parameters\n"
      "  memcpy      time of a memcpy (h2d, d2h or d2d)\n"
      "  classify    a trace's GPU time by kernel class, the model against measured kernels\n"
      "  gpus        the GPUs of kernels_db\n\n"
      "`lumos cost <kind> --help` describes each kind's options.\n\n" +
      examples_section({"lumos cost gemm --m 8192 --n 8192 --k 8192 --gpu h100",
                        "lumos cost collective --op allreduce --bytes 1GiB --ranks 64",
                        "lumos cost classify trace.json.gz"});
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    (argc < 2 ? std::cerr : std::cout) << usage;
    return argc < 2 ? 1 : 0;
  }
  const std::string what = argv[1];
  if (what == "gemm") return cost_gemm(argc - 1, argv + 1);
  if (what == "attention") return cost_attention(argc - 1, argv + 1);
  if (what == "collective") return cost_collective(argc - 1, argv + 1);
  if (what == "memory" || what == "optimizer" || what == "memcpy")
    return cost_memory(argc - 1, argv + 1);
  if (what == "classify") return cost_classify(argc - 1, argv + 1);
  if (what == "gpus") return cost_gpus(argc - 1, argv + 1);
  throw InputError("lumos cost: unknown kind '" + what + "'" +
                   did_you_mean(what, {"gemm", "attention", "collective", "memory", "optimizer",
                                       "memcpy", "classify", "gpus"}) +
                   " (expected gemm, attention, collective, memory, optimizer, memcpy, classify "
                   "or gpus)");
}

}  // namespace lumos::cli
