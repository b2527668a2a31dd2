// lumos cost gemm|attention|collective|memory|optimizer|memcpy|classify|gpus: the kernel and
// collective cost model from the command line, as text or JSON.
#include <cxxopts.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "common/stats.hpp"
#include "cost/attention_model.hpp"
#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernel_classifier.hpp"
#include "cost/memory_model.hpp"
#include "cost/size_units.hpp"
#include "trace/kineto_loader.hpp"

namespace lumos::cli {
namespace {

using namespace lumos::cost;

void common_options(cxxopts::Options& o) {
  o.add_options()("gpu", "GPU (a100, h100, h200, b200, h800 or an alias)",
                  cxxopts::value<std::string>()->default_value("h100"))(
      "db", "read kernels_db from this folder instead of the embedded copy",
      cxxopts::value<std::string>())("json", "print JSON")("h,help", "show this help");
}

const KernelsDb& db_for(const cxxopts::ParseResult& a, KernelsDb* storage) {
  if (a.count("db")) {
    *storage = load_db(a["db"].as<std::string>());
    return *storage;
  }
  return embedded_db();
}

int64_t positive(const cxxopts::ParseResult& a, const char* key) {
  int64_t v = 0;
  try {
    v = a[key].as<int64_t>();  // present, or defaulted
  } catch (const cxxopts::exceptions::exception&) {
    throw InputError(std::string("lumos cost: missing --") + key);
  }
  LUMOS_EXPECT(v > 0, std::string("lumos cost: --") + key + " must be positive");
  return v;
}

int cost_gemm(int argc, char** argv) {
  // cxxopts takes one-letter names as short options: accept the documented --m/--n/--k too.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> fixed;
  for (auto& s : args) {
    if (s == "--m" || s == "--n" || s == "--k") s = s.substr(1);
    fixed.push_back(s.data());
  }
  argc = static_cast<int>(fixed.size());
  argv = fixed.data();
  cxxopts::Options o("lumos cost gemm", "Time of a GEMM C[M,N] = A[M,K] B[K,N] on one GPU.");
  o.add_options()("m", "M", cxxopts::value<int64_t>())("n", "N", cxxopts::value<int64_t>())(
      "k", "K", cxxopts::value<int64_t>())("batch", "independent GEMMs (bmm)",
                                           cxxopts::value<int64_t>()->default_value("1"))(
      "dtype", "fp32, tf32, bf16, fp16 or fp8",
      cxxopts::value<std::string>()->default_value("bf16"))(
      "no-points", "ignore measured points; use the fitted model only");
  common_options(o);
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  KernelsDb storage;
  const KernelsDb& db = db_for(a, &storage);
  const GpuSpec& gpu = db.gpu(a["gpu"].as<std::string>());
  GemmQuery q{positive(a, "m"), positive(a, "n"), positive(a, "k"), positive(a, "batch"),
              parse_dtype(a["dtype"].as<std::string>())};
  const GemmEstimate e = gemm_time(db, gpu, q, !a.count("no-points"));
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object()
        .field("gpu", gpu.name)
        .field("dtype", to_string(q.dtype))
        .field("m", q.m)
        .field("n", q.n)
        .field("k", q.k);
    w.field("batch", q.batch)
        .field("time_us", e.time_us)
        .field("tflops", e.tflops)
        .field("method", e.method)
        .end_object();
    std::cout << '\n';
  } else {
    std::printf("gemm %lldx%lldx%lld x%lld %s on %s: %.2f us, %.1f TFLOP/s (%s)\n", (long long)q.m,
                (long long)q.n, (long long)q.k, (long long)q.batch, to_string(q.dtype),
                gpu.name.c_str(), e.time_us, e.tflops, e.method.c_str());
  }
  return 0;
}

int cost_attention(int argc, char** argv) {
  cxxopts::Options o("lumos cost attention", "Time of FlashAttention forward or backward.");
  o.add_options()("batch", "batch", cxxopts::value<int64_t>())(
      "heads", "heads", cxxopts::value<int64_t>())("seq", "sequence length",
                                                   cxxopts::value<int64_t>())(
      "head-dim", "head dim", cxxopts::value<int64_t>()->default_value("128"))(
      "causal", "causal mask")("pass", "fwd or bwd",
                               cxxopts::value<std::string>()->default_value("fwd"))(
      "dtype", "bf16, fp16 or fp8", cxxopts::value<std::string>()->default_value("bf16"));
  common_options(o);
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  KernelsDb storage;
  const KernelsDb& db = db_for(a, &storage);
  const GpuSpec& gpu = db.gpu(a["gpu"].as<std::string>());
  const std::string pass = a["pass"].as<std::string>();
  LUMOS_EXPECT(pass == "fwd" || pass == "bwd",
               "lumos cost attention: --pass: expected fwd or bwd, got '" + pass + "'");
  AttentionQuery q{positive(a, "batch"),
                   positive(a, "heads"),
                   positive(a, "seq"),
                   positive(a, "head-dim"),
                   a.count("causal") > 0,
                   pass == "bwd",
                   parse_dtype(a["dtype"].as<std::string>())};
  const AttentionEstimate e = attention_time(db, gpu, q);
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object()
        .field("gpu", gpu.name)
        .field("pass", pass)
        .field("causal", q.causal)
        .field("time_us", e.time_us);
    w.field("tflops", e.tflops).field("flops", e.flops).field("table", e.table).end_object();
    std::cout << '\n';
  } else {
    std::printf("attention %s b=%lld h=%lld s=%lld d=%lld%s on %s: %.2f us, %.1f TFLOP/s (%s)\n",
                pass.c_str(), (long long)q.batch, (long long)q.heads, (long long)q.seq,
                (long long)q.head_dim, q.causal ? " causal" : "", gpu.name.c_str(), e.time_us,
                e.tflops, e.table.c_str());
  }
  return 0;
}

int cost_collective(int argc, char** argv) {
  cxxopts::Options o("lumos cost collective",
                     "Time of an NCCL collective with NCCL's algorithm and protocol model.");
  o.add_options()("op",
                  "allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv",
                  cxxopts::value<std::string>()->default_value("allreduce"))(
      "bytes", "message size (nccl-tests size: 4096, 64MiB, 1GiB, ...)",
      cxxopts::value<std::string>())("ranks", "ranks in the group", cxxopts::value<int64_t>())(
      "ranks-per-node", "ranks per node", cxxopts::value<int64_t>()->default_value("8"))(
      "algo", "auto, ring, tree, nvls or nvlstree",
      cxxopts::value<std::string>()->default_value("auto"))(
      "topology", "a topology of kernels_db/nccl.json (default: the GPU's)",
      cxxopts::value<std::string>())("nic-gbps", "override: NIC line rate, GB/s",
                                     cxxopts::value<double>())(
      "nics-per-gpu", "override: NICs per GPU", cxxopts::value<int>())(
      "nic-efficiency", "override: achieved fraction of NIC line rate", cxxopts::value<double>());
  common_options(o);
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  KernelsDb storage;
  const KernelsDb& db = db_for(a, &storage);
  const GpuSpec& gpu = db.gpu(a["gpu"].as<std::string>());
  Topology topo = a.count("topology") ? db.topology(a["topology"].as<std::string>())
                                      : db.default_topology_for(gpu);
  if (a.count("nic-gbps")) topo.nic_gbps = a["nic-gbps"].as<double>();
  if (a.count("nics-per-gpu")) topo.nics_per_gpu = a["nics-per-gpu"].as<int>();
  if (a.count("nic-efficiency")) topo.nic_efficiency = a["nic-efficiency"].as<double>();
  LUMOS_EXPECT(
      topo.nic_gbps > 0 && topo.nics_per_gpu > 0 && topo.nic_efficiency > 0 &&
          topo.nic_efficiency <= 1,
      "lumos cost collective: NIC rate and count must be positive and efficiency in (0, 1]");
  LUMOS_EXPECT(a.count("bytes"), "lumos cost collective: missing --bytes");
  CollectiveQuery q;
  q.op = parse_collective(a["op"].as<std::string>());
  q.bytes = parse_bytes(a["bytes"].as<std::string>(), "--bytes");
  q.ranks = static_cast<int>(positive(a, "ranks"));
  q.ranks_per_node = static_cast<int>(positive(a, "ranks-per-node"));
  q.algo = parse_coll_algo(a["algo"].as<std::string>());
  const CollectiveEstimate e = collective_time(db, gpu, topo, q);
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object()
        .field("gpu", gpu.name)
        .field("topology", topo.name)
        .field("op", to_string(q.op))
        .field("bytes", q.bytes);
    w.field("ranks", q.ranks).field("ranks_per_node", q.ranks_per_node).field("time_us", e.time_us);
    w.field("latency_us", e.latency_us)
        .field("algbw_gbps", e.algbw_gbps)
        .field("busbw_gbps", e.busbw_gbps);
    w.field("algorithm", to_string(e.algo)).field("protocol", to_string(e.proto)).end_object();
    std::cout << '\n';
  } else {
    std::printf(
        "%s %.0f B over %d ranks (%d per node) on %s [%s]: %.2f us, algbw %.1f GB/s, busbw %.1f "
        "GB/s (%s/%s)\n",
        to_string(q.op), q.bytes, q.ranks, q.ranks_per_node, gpu.name.c_str(), topo.name.c_str(),
        e.time_us, e.algbw_gbps, e.busbw_gbps, to_string(e.algo), to_string(e.proto));
  }
  return 0;
}

int cost_memory(int argc, char** argv, const std::string& what) {
  cxxopts::Options o("lumos cost " + what,
                     what == "memory" ? "Time of a memory-bound kernel moving --bytes."
                     : what == "optimizer"
                         ? "Time of a fused optimizer step over --params parameters."
                         : "Time of a memcpy.");
  o.add_options()("class", "norm, softmax, loss, elementwise, embedding, optimizer, reduce",
                  cxxopts::value<std::string>()->default_value("elementwise"))(
      "bytes", "bytes moved", cxxopts::value<std::string>())("params", "parameters (optimizer)",
                                                             cxxopts::value<double>())(
      "direction", "h2d, d2h or d2d (memcpy)", cxxopts::value<std::string>()->default_value("h2d"));
  common_options(o);
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  KernelsDb storage;
  const KernelsDb& db = db_for(a, &storage);
  const GpuSpec& gpu = db.gpu(a["gpu"].as<std::string>());
  double us = 0;
  if (what == "optimizer") {
    LUMOS_EXPECT(a.count("params") && a["params"].as<double>() > 0,
                 "lumos cost optimizer: missing or non-positive --params");
    us = optimizer_time_us(db, gpu, a["params"].as<double>());
  } else {
    LUMOS_EXPECT(a.count("bytes"), "lumos cost " + what + ": missing --bytes");
    const double bytes = parse_bytes(a["bytes"].as<std::string>(), "--bytes");
    us = what == "memory" ? membound_time_us(db, gpu, a["class"].as<std::string>(), bytes)
                          : memcpy_time_us(db, gpu, bytes,
                                           parse_copy_direction(a["direction"].as<std::string>()));
  }
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object().field("gpu", gpu.name).field("kind", what).field("time_us", us).end_object();
    std::cout << '\n';
  } else {
    std::printf("%s on %s: %.2f us\n", what.c_str(), gpu.name.c_str(), us);
  }
  return 0;
}

int cost_classify(int argc, char** argv) {
  cxxopts::Options o(
      "lumos cost classify",
      "Classify a trace's GPU time by kernel class and compare the cost model with the measured "
      "GEMM and NCCL kernels (on the traced GPU, when kernels_db knows it).");
  o.positional_help("TRACE");
  o.add_options()("input", "trace", cxxopts::value<std::string>())("verbose",
                                                                   "list every priced kernel");
  common_options(o);
  o.parse_positional({"input"});
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  LUMOS_EXPECT(a.count("input"), "lumos cost classify: missing TRACE");
  KernelsDb storage;
  const KernelsDb& db = db_for(a, &storage);
  const auto t = trace::load_trace(a["input"].as<std::string>());
  const TraceCostReport r = cost_report(db, t);
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object().field("trace", t.path).field("gpu", r.gpu).field("gpu_time_us", r.gpu_time_us);
    w.field("classified_fraction", r.classified_fraction);
    w.key("time_by_class_us").begin_object();
    for (const auto& [k, v] : r.time_by_class_us) w.field(k, v);
    w.end_object();
    w.key("model_vs_measured").begin_object();
    for (const auto& [k, v] : r.rel_errors)
      w.key(k)
          .begin_object()
          .field("kernels", static_cast<uint64_t>(v.size()))
          .field("median_abs_error", median(v))
          .end_object();
    w.end_object().end_object();
    std::cout << '\n';
  } else {
    std::printf("%s: %.1f us of GPU time, %.2f%% classified (GPU: %s)\n", t.path.c_str(),
                r.gpu_time_us, 100 * r.classified_fraction,
                r.gpu.empty() ? "not in kernels_db, no predictions" : r.gpu.c_str());
    for (const auto& [k, v] : r.time_by_class_us)
      std::printf("  %-14s %14.1f us %6.2f%%\n", k.c_str(), v, 100 * v / r.gpu_time_us);
    for (const auto& [k, v] : r.rel_errors)
      std::printf("  model vs measured, %s: %zu kernels, median |error| %.1f%%\n", k.c_str(),
                  v.size(), 100 * median(v));
    if (a.count("verbose") && !r.gpu.empty()) {
      const GpuSpec& gpu = db.gpu(r.gpu);
      for (const ClassifiedKernel& k : r.kernels) {
        const auto& e = t.events[k.event];
        const double measured = static_cast<double>(e.dur_ns) / 1000.0;
        if (k.gemm)
          std::printf("  gemm %lldx%lldx%lld x%lld %s: model %.1f us, measured %.1f us  %.60s\n",
                      (long long)k.gemm->m, (long long)k.gemm->n, (long long)k.gemm->k,
                      (long long)k.gemm->batch, to_string(k.gemm->dtype),
                      gemm_time(db, gpu, *k.gemm).time_us, measured,
                      std::string(t.name_of(e)).c_str());
        if (k.collective)
          std::printf("  %s %.0f B x%d: model %.1f us, measured %.1f us\n",
                      to_string(k.collective->op), k.collective->bytes, k.collective->ranks,
                      collective_time(db, gpu, db.default_topology_for(gpu), *k.collective).time_us,
                      measured);
      }
    }
  }
  return 0;
}

int cost_gpus(int argc, char** argv) {
  cxxopts::Options o("lumos cost gpus", "List the GPUs of kernels_db.");
  common_options(o);
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  KernelsDb storage;
  const KernelsDb& db = db_for(a, &storage);
  std::printf("%-6s %-9s %5s %9s %9s %9s %8s %6s %8s %6s\n", "gpu", "arch", "SMs", "bf16 TF",
              "fp8 TF", "HBM GB/s", "HBM GiB", "L2 MiB", "NVL GB/s", "TDP W");
  for (const GpuSpec& g : db.gpus) {
    const auto& f8 = g.peak_tflops[static_cast<int>(Dtype::kFp8)];
    std::printf("%-6s %-9s %5d %9.1f %9s %9.0f %8.0f %6s %8.0f %6.0f\n", g.name.c_str(),
                to_string(g.arch), g.sms, *g.peak_tflops[static_cast<int>(Dtype::kBf16)],
                f8 ? std::to_string(static_cast<int>(*f8)).c_str() : "-", g.hbm_gbps, g.hbm_gib,
                g.l2_mib ? std::to_string(static_cast<int>(*g.l2_mib)).c_str() : "-", g.nvlink_gbps,
                g.tdp_w);
  }
  return 0;
}

}  // namespace

int cmd_cost(int argc, char** argv) {
  const std::string usage =
      "usage: lumos cost <gemm|attention|collective|memory|optimizer|memcpy|classify|gpus> "
      "[options]\n";
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    (argc < 2 ? std::cerr : std::cout) << usage;
    return argc < 2 ? 1 : 0;
  }
  const std::string what = argv[1];
  if (what == "gemm") return cost_gemm(argc - 1, argv + 1);
  if (what == "attention") return cost_attention(argc - 1, argv + 1);
  if (what == "collective") return cost_collective(argc - 1, argv + 1);
  if (what == "memory" || what == "optimizer" || what == "memcpy")
    return cost_memory(argc - 1, argv + 1, what);
  if (what == "classify") return cost_classify(argc - 1, argv + 1);
  if (what == "gpus") return cost_gpus(argc - 1, argv + 1);
  throw InputError(
      "lumos cost: unknown kind '" + what +
      "' (expected gemm, attention, collective, memory, optimizer, memcpy, classify or gpus)");
}

}  // namespace lumos::cli
