// lumos estimate / lumos generate: a training iteration of a GPT or Llama model under a Megatron
// layout, from the model description alone (no trace). `estimate` replays the generated graph and
// reports; `generate` also writes it as one Kineto trace per pipeline stage.
#include <cxxopts.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/generated_trace.hpp"
#include "estimate/layout_search.hpp"

namespace lumos::cli {
namespace {

using namespace lumos::model;
using namespace lumos::estimate;

void layout_options(cxxopts::Options& o) {
  o.add_options()("model",
                  "preset: gpt3-15b, gpt3-44b, gpt3-117b, gpt3-175b, llama3-8b, "
                  "llama3-70b, llama3-405b",
                  cxxopts::value<std::string>()->default_value("gpt3-15b"))(
      "model-file", "TOML model file (optional `preset = ...`, then fields)",
      cxxopts::value<std::string>())("layers", "override: transformer layers",
                                     cxxopts::value<std::string>())(
      "hidden", "override: hidden size", cxxopts::value<std::string>())(
      "ffn", "override: MLP inner size", cxxopts::value<std::string>())(
      "heads", "override: attention heads", cxxopts::value<std::string>())(
      "kv-heads", "override: KV heads (query groups)", cxxopts::value<std::string>())(
      "head-dim", "override: head dimension", cxxopts::value<std::string>())(
      "vocab", "override: vocabulary", cxxopts::value<std::string>())(
      "seq", "override: sequence length", cxxopts::value<std::string>())(
      "act", "override: gelu | swiglu", cxxopts::value<std::string>())(
      "gpu", "GPU in kernels_db", cxxopts::value<std::string>()->default_value("h100"))(
      "topology", "network topology in kernels_db (default: the GPU's)",
      cxxopts::value<std::string>())("tp", "tensor parallel degree",
                                     cxxopts::value<int>()->default_value("2"))(
      "pp", "pipeline parallel degree", cxxopts::value<int>()->default_value("2"))(
      "dp", "data parallel degree", cxxopts::value<int>()->default_value("4"))(
      "cp", "context parallel degree", cxxopts::value<int>()->default_value("1"))(
      "mbs", "micro-batch size (sequences)", cxxopts::value<int64_t>()->default_value("1"))(
      "gbs", "global batch size (sequences)", cxxopts::value<int64_t>()->default_value("64"))(
      "interleave", "virtual pipeline stages per GPU (interleaved 1F1B when > 1)",
      cxxopts::value<int>()->default_value("1"))(
      "recompute", "none | selective | full", cxxopts::value<std::string>()->default_value("none"))(
      "sp", "sequence parallel")("dist-opt", "distributed optimizer (reduce-scatter + all-gather)")(
      "fsdp", "fully sharded data parallel (weights, gradients and optimizer state sharded)")(
      "split-embedding",
      "count the embedding and the loss as one layer each when splitting layers over stages")(
      "dtype", "GEMM precision: bf16 | fp16 | fp8",
      cxxopts::value<std::string>()->default_value("bf16"))(
      "free-comm", "idealize: collectives and pipeline messages take no time")(
      "db", "read kernels_db from this folder", cxxopts::value<std::string>())(
      "json", "print JSON")("h,help", "show this help");
}

EstimateRequest request_from(const cxxopts::ParseResult& a) {
  EstimateRequest req;
  if (a.count("model-file")) {
    req.model = load_model_toml(a["model-file"].as<std::string>());
    if (a.count("model"))
      throw InputError("give --model or --model-file, not both (a file may name a preset)");
  } else {
    req.model = preset(a["model"].as<std::string>());
  }
  for (const char* k :
       {"layers", "hidden", "ffn", "heads", "kv-heads", "head-dim", "vocab", "seq", "act"})
    if (a.count(k)) {
      std::string key = k;
      std::replace(key.begin(), key.end(), '-', '_');
      set_field(&req.model, key, a[k].as<std::string>(), std::string("--") + k);
      req.model.name += std::string(" ") + k + "=" + a[k].as<std::string>();
    }
  ParallelConfig& c = req.cfg;
  c.tp = a["tp"].as<int>();
  c.pp = a["pp"].as<int>();
  c.dp = a["dp"].as<int>();
  c.cp = a["cp"].as<int>();
  c.mbs = a["mbs"].as<int64_t>();
  c.gbs = a["gbs"].as<int64_t>();
  c.interleave = a["interleave"].as<int>();
  c.recompute = parse_recompute(a["recompute"].as<std::string>());
  c.sequence_parallel = a.count("sp") > 0;
  c.distributed_optimizer = a.count("dist-opt") > 0;
  c.fsdp = a.count("fsdp") > 0;
  c.split_counts_embedding = a.count("split-embedding") > 0;
  c.dtype = cost::parse_dtype(a["dtype"].as<std::string>());
  if (c.dtype != cost::Dtype::kBf16 && c.dtype != cost::Dtype::kFp16 &&
      c.dtype != cost::Dtype::kFp8)
    throw InputError("--dtype " + a["dtype"].as<std::string>() + ": expected bf16, fp16 or fp8");
  req.gpu = a["gpu"].as<std::string>();
  if (a.count("topology")) req.topology = a["topology"].as<std::string>();
  req.options.free_comm = a.count("free-comm") > 0;
  return req;
}

const char* schedule_name(const ParallelConfig& c) {
  return c.pp == 1 ? "no pipeline" : c.interleave > 1 ? "interleaved 1F1B" : "1F1B";
}

double gib(double b) {
  return b / (1024.0 * 1024.0 * 1024.0);
}

void print_text(const Estimate& e) {
  const ParallelConfig& c = e.cfg;
  std::printf("lumos estimate: %s on %lld x %s (%s)\n", e.model.name.c_str(),
              static_cast<long long>(c.gpus()), e.gpu.c_str(), e.topology.c_str());
  std::printf(
      "  model     %lld layers, hidden %lld, ffn %lld, %lld heads (%lld KV) x %lld, vocab "
      "%lld (padded %lld), seq %lld, %s\n",
      static_cast<long long>(e.model.layers), static_cast<long long>(e.model.hidden),
      static_cast<long long>(e.model.ffn), static_cast<long long>(e.model.heads),
      static_cast<long long>(e.model.kv_heads), static_cast<long long>(e.model.head_dim),
      static_cast<long long>(e.model.vocab), static_cast<long long>(e.layout.padded_vocab),
      static_cast<long long>(e.model.seq), to_string(e.model.act));
  std::printf(
      "  layout    TP %d x CP %d x PP %d x DP %d, mbs %lld, gbs %lld (%lld micro-batch%s), "
      "%s%s, recompute %s%s%s, %s\n",
      c.tp, c.cp, c.pp, c.dp, static_cast<long long>(c.mbs), static_cast<long long>(c.gbs),
      static_cast<long long>(e.layout.microbatches), e.layout.microbatches == 1 ? "" : "es",
      schedule_name(c), c.interleave > 1 ? (" x" + std::to_string(c.interleave)).c_str() : "",
      to_string(c.recompute), c.sequence_parallel ? ", sequence parallel" : "",
      c.fsdp ? ", FSDP" : (c.distributed_optimizer ? ", distributed optimizer" : ""),
      cost::to_string(c.dtype));
  std::printf("  step time          %.4f s\n", e.step_time_us * 1e-6);
  const double per_gpu = e.tokens_per_s / static_cast<double>(c.gpus());
  std::printf("  tokens/s           %.*f  (%.*f per GPU)\n", e.tokens_per_s >= 100 ? 0 : 3,
              e.tokens_per_s, per_gpu >= 100 ? 1 : 4, per_gpu);
  std::printf("  model TFLOP/s/GPU  %.1f   MFU %.1f%%   HFU %.1f%%  (of %.0f TFLOP/s %s peak)\n",
              e.model_tflops_per_gpu, 100 * e.mfu, 100 * e.hfu, e.peak_tflops,
              cost::to_string(c.dtype));
  const auto& b = e.breakdown;
  const double w = e.step_time_us / 100;
  std::printf(
      "  breakdown          exposed compute %.1f%%, overlapped %.1f%%, exposed comm %.1f%%, "
      "bubble %.1f%%, other %.1f%%  (mean over stages)\n",
      b.exposed_compute_us / w, b.overlapped_us / w, b.exposed_comm_us / w, b.bubble_us / w,
      b.other_us / w);
  std::printf("  kernel time       ");
  for (size_t i = 0; i < e.kernel_time_us.size() && i < 6; ++i)
    std::printf("%s %s %.1f%%", i ? "," : "", e.kernel_time_us[i].first.c_str(),
                e.kernel_time_us[i].second / w);
  std::printf("  (of the step, mean over stages)\n");
  const StageMemory& m = e.stages[static_cast<size_t>(e.worst_memory_stage)].memory;
  std::printf(
      "  memory per GPU     %.1f GiB of %.0f GiB (stage %d): weights %.1f, gradients %.1f, "
      "optimizer %.1f, activations %.1f GiB -> %s\n",
      gib(m.total_bytes()), gib(e.memory_capacity_bytes), e.worst_memory_stage,
      gib(m.weights_bytes), gib(m.grads_bytes), gib(m.optimizer_bytes), gib(m.activations_bytes),
      !e.fits ? "DOES NOT FIT"
      : m.total_bytes() > 0.9 * e.memory_capacity_bytes
          ? "fits, tight (over 90%; the CUDA context, NCCL buffers and fragmentation need some)"
          : "fits");
  if (c.pp > 1) {
    std::printf("  stage  rank     end (s)  compute%%  comm%%  bubble%%  memory GiB\n");
    for (const auto& s : e.stages) {
      const auto& sb = s.breakdown;
      std::printf("  %5d  %5d  %10.4f  %8.1f  %5.1f  %7.1f  %10.1f\n", s.stage, s.rank,
                  s.end_us * 1e-6, (sb.exposed_compute_us + sb.overlapped_us) / w,
                  sb.exposed_comm_us / w, sb.bubble_us / w, gib(s.memory.total_bytes()));
    }
  }
  std::printf(
      "  graph              %llu nodes, %llu edges; built in %.0f ms, replayed in %.0f ms\n",
      static_cast<unsigned long long>(e.nodes), static_cast<unsigned long long>(e.edges),
      e.build_ms, e.replay_ms);
}

void write_breakdown(common::JsonWriter& w, const StageBreakdown& b) {
  w.begin_object()
      .field("exposed_compute_us", b.exposed_compute_us)
      .field("overlapped_us", b.overlapped_us)
      .field("exposed_comm_us", b.exposed_comm_us)
      .field("bubble_us", b.bubble_us)
      .field("other_us", b.other_us)
      .end_object();
}

void print_json(const Estimate& e, const std::vector<std::string>& files) {
  common::JsonWriter w(std::cout);
  const ParallelConfig& c = e.cfg;
  w.begin_object();
  w.key("model").begin_object();
  w.field("name", e.model.name).field("layers", e.model.layers).field("hidden", e.model.hidden);
  w.field("ffn", e.model.ffn).field("heads", e.model.heads).field("kv_heads", e.model.kv_heads);
  w.field("head_dim", e.model.head_dim).field("vocab", e.model.vocab);
  w.field("padded_vocab", e.layout.padded_vocab).field("seq", e.model.seq);
  w.field("act", to_string(e.model.act)).end_object();
  w.key("layout").begin_object();
  w.field("gpu", e.gpu).field("topology", e.topology).field("gpus", c.gpus());
  w.field("tp", c.tp).field("cp", c.cp).field("pp", c.pp).field("dp", c.dp);
  w.field("mbs", c.mbs).field("gbs", c.gbs).field("microbatches", e.layout.microbatches);
  w.field("interleave", c.interleave).field("schedule", schedule_name(c));
  w.field("recompute", to_string(c.recompute)).field("sequence_parallel", c.sequence_parallel);
  w.field("distributed_optimizer", c.distributed_optimizer).field("fsdp", c.fsdp);
  w.field("dtype", cost::to_string(c.dtype)).end_object();
  w.field("step_time_s", e.step_time_us * 1e-6);
  w.field("tokens_per_s", e.tokens_per_s);
  w.field("model_flops", e.model_flops).field("hardware_flops", e.hardware_flops);
  w.field("model_tflops_per_gpu", e.model_tflops_per_gpu);
  w.field("hw_tflops_per_gpu", e.hw_tflops_per_gpu);
  w.field("peak_tflops", e.peak_tflops).field("mfu", e.mfu).field("hfu", e.hfu);
  w.key("breakdown");
  write_breakdown(w, e.breakdown);
  w.key("kernel_time_us").begin_object();
  for (const auto& [cls, us] : e.kernel_time_us) w.field(cls, us);
  w.end_object();
  w.key("memory").begin_object();
  const StageMemory& m = e.stages[static_cast<size_t>(e.worst_memory_stage)].memory;
  w.field("stage", e.worst_memory_stage).field("weights_bytes", m.weights_bytes);
  w.field("grads_bytes", m.grads_bytes).field("optimizer_bytes", m.optimizer_bytes);
  w.field("activations_bytes", m.activations_bytes).field("total_bytes", m.total_bytes());
  w.field("capacity_bytes", e.memory_capacity_bytes).field("fits", e.fits);
  w.field("fraction_of_capacity", m.total_bytes() / e.memory_capacity_bytes).end_object();
  w.key("stages").begin_array();
  for (const auto& s : e.stages) {
    w.begin_object().field("stage", s.stage).field("rank", s.rank).field("end_s", s.end_us * 1e-6);
    w.key("breakdown");
    write_breakdown(w, s.breakdown);
    w.field("params", s.memory.params).field("memory_bytes", s.memory.total_bytes());
    w.field("inflight_microbatches", s.memory.inflight_microbatches).end_object();
  }
  w.end_array();
  w.key("graph").begin_object().field("nodes", e.nodes).field("edges", e.edges);
  w.field("build_ms", e.build_ms).field("replay_ms", e.replay_ms).end_object();
  if (!files.empty()) {
    w.key("traces").begin_array();
    for (const auto& f : files) w.value(f);
    w.end_array();
  }
  w.end_object();
  std::cout << '\n';
}

void write_search_csv(const std::string& path, const SearchResult& r) {
  write_file_atomically(path, [&](std::ostream& os) {
    os << "rank,tp,cp,pp,dp,mbs,interleave,recompute,sequence_parallel,distributed_optimizer,fsdp,"
          "split_embedding,step_time_s,tokens_per_s,model_tflops_per_gpu,mfu,memory_gib,"
          "bubble_fraction,exposed_comm_fraction\n";
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const ParallelConfig& c = r.rows[i].cfg;
      const Estimate& e = r.rows[i].estimate;
      const auto& mem = e.stages[static_cast<size_t>(e.worst_memory_stage)].memory;
      char line[512];
      std::snprintf(line, sizeof line,
                    "%zu,%d,%d,%d,%d,%lld,%d,%s,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.4f,%.2f,%.4f,%.4f\n",
                    i + 1, c.tp, c.cp, c.pp, c.dp, static_cast<long long>(c.mbs), c.interleave,
                    to_string(c.recompute), c.sequence_parallel, c.distributed_optimizer, c.fsdp,
                    c.split_counts_embedding, e.step_time_us * 1e-6, e.tokens_per_s,
                    e.model_tflops_per_gpu, e.mfu, gib(mem.total_bytes()),
                    e.breakdown.bubble_us / e.step_time_us,
                    e.breakdown.exposed_comm_us / e.step_time_us);
      os << line;
    }
  });
}

int run_search(const cxxopts::ParseResult& a, const cost::KernelsDb& db) {
  if (!a.count("gpus")) throw InputError("lumos estimate --search: --gpus N is required");
  for (const char* k : {"tp", "pp", "dp", "cp", "mbs", "interleave", "recompute", "sp", "dist-opt",
                        "split-embedding"})
    if (a.count(k))
      throw InputError(std::string("lumos estimate --search: --") + k +
                       " is searched; leave it out");
  if (a.count("csv")) {  // before the search: a bad path should not cost its minutes
    const auto parent = std::filesystem::path(a["csv"].as<std::string>()).parent_path();
    std::error_code ec;
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
      throw InputError(a["csv"].as<std::string>() + ": the folder does not exist");
  }
  SearchRequest q;
  q.base = request_from(a);
  q.gpus = a["gpus"].as<int64_t>();
  const int top = a["top"].as<int>();
  LUMOS_EXPECT(top >= 0, "lumos estimate --search: --top must be >= 0");
  const SearchResult r = search_layouts(q, db);
  if (a.count("csv")) write_search_csv(a["csv"].as<std::string>(), r);
  const size_t shown = std::min(r.rows.size(), static_cast<size_t>(top));
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object().field("gpus", q.gpus).field("candidates", uint64_t{r.candidates});
    w.field("invalid", uint64_t{r.invalid}).field("too_big", uint64_t{r.too_big});
    w.field("too_large", uint64_t{r.too_large});
    w.field("estimated", uint64_t{r.rows.size()}).key("layouts").begin_array();
    for (size_t i = 0; i < shown; ++i) {
      const ParallelConfig& c = r.rows[i].cfg;
      const Estimate& e = r.rows[i].estimate;
      w.begin_object().field("tp", c.tp).field("cp", c.cp).field("pp", c.pp).field("dp", c.dp);
      w.field("mbs", c.mbs).field("interleave", c.interleave);
      w.field("recompute", to_string(c.recompute));
      w.field("split_embedding", c.split_counts_embedding);
      w.field("step_time_s", e.step_time_us * 1e-6).field("tokens_per_s", e.tokens_per_s);
      w.field("model_tflops_per_gpu", e.model_tflops_per_gpu).field("mfu", e.mfu);
      w.field("memory_bytes",
              e.stages[static_cast<size_t>(e.worst_memory_stage)].memory.total_bytes());
      w.end_object();
    }
    w.end_array().end_object();
    std::cout << '\n';
    return 0;
  }
  std::printf(
      "lumos estimate --search: %s on %lld x %s, gbs %lld, %s: %zu layouts, %zu invalid, "
      "%zu do not fit, %zu too large to model, %zu estimated\n",
      q.base.model.name.c_str(), static_cast<long long>(q.gpus), q.base.gpu.c_str(),
      static_cast<long long>(q.base.cfg.gbs), cost::to_string(q.base.cfg.dtype), r.candidates,
      r.invalid, r.too_big, r.too_large, r.rows.size());
  if (r.rows.empty()) std::printf("  no layout fits\n");
  if (shown > 0)
    std::printf(
        "  rank   TP  CP  PP  DP  mbs   v  recompute  step (s)    tokens/s  TFLOP/s/GPU    "
        "MFU  memory GiB\n");
  for (size_t i = 0; i < shown; ++i) {
    const ParallelConfig& c = r.rows[i].cfg;
    const Estimate& e = r.rows[i].estimate;
    std::printf("  %4zu %4d %3d %3d %3d %4lld %3d  %-9s %9.3f %11.0f %12.1f %5.1f%% %11.1f%s\n",
                i + 1, c.tp, c.cp, c.pp, c.dp, static_cast<long long>(c.mbs), c.interleave,
                to_string(c.recompute), e.step_time_us * 1e-6, e.tokens_per_s,
                e.model_tflops_per_gpu, 100 * e.mfu,
                gib(e.stages[static_cast<size_t>(e.worst_memory_stage)].memory.total_bytes()),
                c.split_counts_embedding ? "  (split-embedding)" : "");
  }
  if (a.count("csv")) std::printf("  wrote %s\n", a["csv"].as<std::string>().c_str());
  return 0;
}

int run(int argc, char** argv, bool generate) {
  cxxopts::Options o(generate ? "lumos generate" : "lumos estimate",
                     generate ? "Write a model-driven training iteration as Kineto traces, one "
                                "per pipeline stage (read back by `lumos replay DIR`)"
                              : "Estimate a training iteration of a GPT or Llama model without a "
                                "trace");
  layout_options(o);
  if (generate) o.add_options()("o,output", "output folder", cxxopts::value<std::string>());
  if (!generate)
    o.add_options()("search",
                    "search layouts of the model on --gpus GPUs (degrees, micro-batch, "
                    "interleaving, recomputation) and rank those that fit")(
        "gpus", "GPUs for --search", cxxopts::value<int64_t>())(
        "top", "layouts to print with --search", cxxopts::value<int>()->default_value("10"))(
        "csv", "with --search, write every layout that fits to this CSV file",
        cxxopts::value<std::string>());
  const auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << '\n';
    return 0;
  }
  if (!a.unmatched().empty())
    throw InputError(std::string(generate ? "lumos generate" : "lumos estimate") +
                     ": unexpected argument '" + a.unmatched()[0] + "'");
  if (generate && !a.count("output")) throw InputError("lumos generate: -o FOLDER is required");
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  if (!generate && a.count("search")) return run_search(a, db);
  if (!generate && (a.count("gpus") || a.count("csv") || a.count("top")))
    throw InputError("lumos estimate: --gpus, --top and --csv go with --search");
  const EstimateRun r = run_estimate(request_from(a), db);
  std::vector<std::string> files;
  if (generate)
    files = write_stage_traces(r.step, r.replay, a["output"].as<std::string>(), r.estimate.gpu);
  if (a.count("json")) {
    print_json(r.estimate, files);
  } else {
    print_text(r.estimate);
    for (const auto& f : files) std::printf("  wrote %s\n", f.c_str());
  }
  return 0;
}

}  // namespace

int cmd_estimate(int argc, char** argv) {
  return run(argc, argv, false);
}

int cmd_generate(int argc, char** argv) {
  return run(argc, argv, true);
}

}  // namespace lumos::cli
