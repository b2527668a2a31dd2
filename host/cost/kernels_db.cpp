#include "cost/kernels_db.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <initializer_list>

#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "common/format.hpp"
#include "common/json_syntax.hpp"
#include "common/physical_ranges.hpp"

namespace lumos::cost {

// Generated at build time from kernels_db/*.json (see CMakeLists.txt).
extern const char* const kEmbeddedDbNames[];
extern const char* const kEmbeddedDbTexts[];
extern const int kEmbeddedDbCount;

namespace {

constexpr int64_t kSchemaVersion = 1;
const char* const kFiles[] = {
    "gpus.json",           "gemm.json",     "attention.json", "membound.json",    "nccl.json",
    "kernel_classes.json", "training.json", "stacks.json",    "calibration.json", "carbon.json"};

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Reads fields of one file and names the file and path in every error.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError("kernels_db/" + file_ + ": " + path + ": " + what);
  }
  element at(element e, const char* key, const std::string& path) const {
    element v;
    if (e[key].get(v)) fail(path + "." + key, "missing");
    return v;
  }
  double num(element e, const char* key, const std::string& path) const {
    double d;
    if (at(e, key, path).get(d)) fail(path + "." + key, "expected a number");
    return d;
  }
  int64_t integer(element e, const char* key, const std::string& path) const {
    int64_t i;
    if (at(e, key, path).get(i)) fail(path + "." + key, "expected an integer");
    return i;
  }
  bool flag(element e, const char* key, const std::string& path) const {
    bool b;
    if (at(e, key, path).get(b)) fail(path + "." + key, "expected true or false");
    return b;
  }
  std::string str(element e, const char* key, const std::string& path) const {
    std::string_view s;
    if (at(e, key, path).get(s)) fail(path + "." + key, "expected a string");
    return std::string(s);
  }
  std::vector<double> nums(element e, const std::string& path) const {
    array a;
    if (e.get(a)) fail(path, "expected an array of numbers");
    std::vector<double> out;
    for (element x : a) {
      double d;
      if (x.get(d)) fail(path, "expected an array of numbers");
      out.push_back(d);
    }
    return out;
  }
  ProtoTriple triple(element e, const std::string& path) const {
    const auto v = nums(e, path);
    if (v.size() != 3) fail(path, "expected [LL, LL128, Simple]");
    return {v[0], v[1], v[2]};
  }
  // {"value": x|null, "source": "..."}: a value always comes with its source.
  std::optional<double> sourced(element e, const char* key, const std::string& path) const {
    element v = at(e, key, path);
    std::string_view src;
    if (v["source"].get(src) || src.empty())
      fail(path + "." + key, "every value needs a non-empty \"source\"");
    element val;
    if (v["value"].get(val)) fail(path + "." + key + ".value", "missing");
    if (val.is_null()) return std::nullopt;
    double d;
    if (val.get(d)) fail(path + "." + key + ".value", "expected a number or null");
    return d;
  }
  double sourced_required(element e, const char* key, const std::string& path) const {
    auto v = sourced(e, key, path);
    if (!v) fail(path + "." + key + ".value", "must not be null");
    return *v;
  }
  void check_version(element root) const {
    int64_t v;
    if (root["schema_version"].get(v)) fail("schema_version", "missing");
    if (v != kSchemaVersion)
      fail("schema_version", "version " + std::to_string(v) +
                                 " is not supported (this lumos reads " +
                                 std::to_string(kSchemaVersion) + ")");
  }

 private:
  std::string file_;
};

Arch parse_arch(const Reader& r, const std::string& s, const std::string& path) {
  if (s == "ampere") return Arch::kAmpere;
  if (s == "hopper") return Arch::kHopper;
  if (s == "blackwell") return Arch::kBlackwell;
  r.fail(path, "unknown architecture '" + s + "' (expected ampere, hopper or blackwell)");
}

void parse_gpus(element root, KernelsDb* db) {
  Reader r("gpus.json");
  r.check_version(root);
  array gpus;
  if (root["gpus"].get(gpus)) r.fail("gpus", "expected an array");
  int i = 0;
  for (element g : gpus) {
    const std::string path = "gpus[" + std::to_string(i++) + "]";
    GpuSpec s;
    s.name = r.str(g, "name", path);
    array aliases;
    if (!g["aliases"].get(aliases))
      for (element a : aliases) {
        std::string_view sv;
        if (a.get(sv)) r.fail(path + ".aliases", "expected an array of strings");
        s.aliases.emplace_back(sv);
      }
    s.arch = parse_arch(r, r.str(g, "arch", path), path + ".arch");
    s.sm_version = static_cast<int>(r.integer(g, "sm_version", path));
    const double sms = r.sourced_required(g, "sms", path);
    if (!(sms >= 1 && sms <= 100000)) r.fail(path + ".sms", "expected 1..100000");
    s.sms = static_cast<int>(sms);
    element peaks = r.at(g, "peak_tflops", path);
    for (int d = 0; d < kNumDtypes; ++d) {
      const char* key = to_string(static_cast<Dtype>(d));
      if (peaks[key].error()) continue;
      s.peak_tflops[d] = r.sourced(peaks, key, path + ".peak_tflops");
    }
    // fp16 and tf32 peaks default to what the file gives; bf16 is required.
    if (!s.peak_tflops[static_cast<int>(Dtype::kBf16)])
      r.fail(path + ".peak_tflops.bf16", "required");
    s.hbm_gbps = r.sourced_required(g, "hbm_gbps", path);
    s.hbm_gib = r.sourced_required(g, "hbm_gib", path);
    s.l2_mib = r.sourced(g, "l2_mib", path);
    s.nvlink_gbps = r.sourced_required(g, "nvlink_gbps", path);
    const double links = r.sourced_required(g, "nvlink_links", path);
    if (!(links >= 0 && links <= 1000)) r.fail(path + ".nvlink_links", "expected 0..1000");
    s.nvlink_links = static_cast<int>(links);
    s.nccl_link_gbps = r.sourced_required(g, "nccl_link_gbps", path);
    s.pcie_h2d_gbps = r.sourced_required(g, "pcie_h2d_gbps", path);
    s.pcie_d2h_gbps = r.sourced_required(g, "pcie_d2h_gbps", path);
    s.d2d_gbps = r.sourced_required(g, "d2d_gbps", path);
    s.tdp_w = r.sourced_required(g, "tdp_w", path);
    s.idle_w = r.sourced_required(g, "idle_w", path);
    if (s.sms <= 0 || s.hbm_gbps <= 0 || s.tdp_w <= 0)
      r.fail(path, "sms, hbm_gbps and tdp_w must be positive");
    if (!(s.idle_w >= 0 && s.idle_w < s.tdp_w))
      r.fail(path + ".idle_w", "expected at least 0 and below tdp_w");
    if (!g["matmul_spread"].error()) {
      s.matmul_spread = r.sourced(g, "matmul_spread", path).value_or(0);
      if (!(s.matmul_spread >= 0 && s.matmul_spread <= 0.2))
        r.fail(path + ".matmul_spread.value", "expected a fraction in [0, 0.2] or null");
    }
    if (!g["full_clock_part"].error()) {
      s.full_clock_part = r.str(g, "full_clock_part", path);
      if (s.full_clock_part.empty()) r.fail(path + ".full_clock_part", "expected a GPU name");
    }
    db->gpus.push_back(std::move(s));
  }
  if (db->gpus.empty()) r.fail("gpus", "no GPUs");
  for (size_t k = 0; k < db->gpus.size(); ++k) {
    GpuSpec& s = db->gpus[k];
    if (s.full_clock_part.empty()) continue;
    const std::string path = "gpus[" + std::to_string(k) + "].full_clock_part";
    const GpuSpec* full = nullptr;
    for (const GpuSpec& o : db->gpus)
      if (o.name == s.full_clock_part ||
          std::find(o.aliases.begin(), o.aliases.end(), s.full_clock_part) != o.aliases.end())
        full = &o;
    if (!full || !full->full_clock_part.empty())
      r.fail(path, "expected the name of an uncapped GPU in this file");
    if (full->arch != s.arch || full->sms != s.sms)
      r.fail(path, "expected the same chip (architecture and SMs)");
    // The peaks are the chip's at full clock; a capped part listing lower ones would be capped
    // twice.
    if (s.peak_tflops != full->peak_tflops)
      r.fail(path, "expected the same peak_tflops as the full-clock part (the cap is applied)");
    if (!(s.tdp_w <= full->tdp_w)) r.fail(path, "expected a part whose TDP is at least this one's");
    // The idle draw is the capped part's own, on both sides: only the active power is capped.
    s.full_clock_part = full->name;
    s.matrix_clock_fraction = (s.tdp_w - s.idle_w) / (full->tdp_w - s.idle_w);
  }
}

void parse_gemm(element root, KernelsDb* db) {
  Reader r("gemm.json");
  r.check_version(root);
  GemmParams& p = db->gemm;
  object archs;
  if (root["architectures"].get(archs)) r.fail("architectures", "expected an object");
  for (auto [key, val] : archs) {
    const std::string path = "architectures." + std::string(key);
    const Arch a = parse_arch(r, std::string(key), path);
    element fr = r.at(val, "peak_fraction", path);
    std::array<std::optional<double>, kNumDtypes> f{};
    for (int d = 0; d < kNumDtypes; ++d) {
      double x;
      if (!fr[to_string(static_cast<Dtype>(d))].get(x)) f[d] = x;
    }
    p.peak_fraction[a] = f;
    p.k_half[a] = r.num(val, "k_half", path);
    const double fast = r.sourced(val, "fp8_fast_accum_speedup", path).value_or(1);
    if (!(fast >= 1 && fast <= 1.5))
      r.fail(path + ".fp8_fast_accum_speedup.value", "expected a number in [1, 1.5] or null");
    p.fp8_fast_accum_speedup[a] = fast;
    r.str(val, "source", path);
  }
  array tiles;
  if (root["tiles"].get(tiles)) r.fail("tiles", "expected an array");
  for (element t : tiles)
    p.tiles.push_back({static_cast<int>(r.integer(t, "tm", "tiles")),
                       static_cast<int>(r.integer(t, "tn", "tiles")),
                       r.num(t, "efficiency", "tiles")});
  if (p.tiles.empty()) r.fail("tiles", "at least one tile");
  for (const GemmTile& t : p.tiles)
    if (t.tm <= 0 || t.tn <= 0 || t.tm > 4096 || t.tn > 4096 || !(t.efficiency > 0))
      r.fail("tiles", "tile sizes must be in 1..4096 and efficiencies positive");
  p.streamk_efficiency = r.num(root, "streamk_efficiency", "");
  p.streamk_fixup_us = r.num(root, "streamk_fixup_us", "");
  p.hbm_fraction = r.num(root, "hbm_fraction", "");
  p.floor_us = r.num(root, "floor_us", "");
  p.misaligned_factor = r.num(root, "misaligned_factor", "");
  array points;
  if (!root["points"].get(points)) {
    int i = 0;
    for (element e : points) {
      const std::string path = "points[" + std::to_string(i++) + "]";
      GemmPoint g;
      g.gpu = r.str(e, "gpu", path);
      g.dtype = parse_dtype(r.str(e, "dtype", path));
      g.m = r.integer(e, "m", path);
      g.n = r.integer(e, "n", path);
      g.k = r.integer(e, "k", path);
      element opt;
      if (!e["batch"].get(opt)) {  // optional: a batched GEMM (bmm)
        int64_t batch = 0;
        if (opt.get(batch) || batch < 1) r.fail(path + ".batch", "expected a positive integer");
        g.batch = batch;
      }
      g.tflops = r.num(e, "tflops", path);
      g.source = r.str(e, "source", path);
      if (!e["ceiling"].get(opt)) {  // optional
        bool ceiling = false;
        if (opt.get(ceiling)) r.fail(path + ".ceiling", "expected true or false");
        g.ceiling = ceiling;
      }
      p.points.push_back(g);
    }
  }
}

void parse_attention(element root, KernelsDb* db) {
  Reader r("attention.json");
  r.check_version(root);
  AttentionParams& p = db->attention;
  p.reference_gpu = r.str(root, "reference_gpu", "");
  p.backward_flop_factor = r.num(root, "backward_flop_factor", "");
  array tables;
  if (root["tables"].get(tables)) r.fail("tables", "expected an array");
  int i = 0;
  for (element t : tables) {
    const std::string path = "tables[" + std::to_string(i++) + "]";
    AttentionTable a;
    a.impl = r.str(t, "impl", path);
    if (a.impl != "fa3" && a.impl != "fa2" && a.impl != "cudnn")
      r.fail(path + ".impl", "expected fa3, fa2 or cudnn");
    a.gpu = r.str(t, "gpu", path);
    const std::string pass = r.str(t, "pass", path);
    if (pass != "fwd" && pass != "bwd") r.fail(path + ".pass", "expected fwd or bwd");
    a.backward = pass == "bwd";
    a.causal = r.flag(t, "causal", path);
    a.head_dim = static_cast<int>(r.integer(t, "head_dim", path));
    a.dtype = parse_dtype(r.str(t, "dtype", path));
    a.seq = r.nums(r.at(t, "seq", path), path + ".seq");
    a.tflops = r.nums(r.at(t, "tflops", path), path + ".tflops");
    a.source = r.str(t, "source", path);
    if (a.seq.empty() || a.seq.size() != a.tflops.size())
      r.fail(path, "seq and tflops must be non-empty and equally long");
    if (!std::is_sorted(a.seq.begin(), a.seq.end())) r.fail(path + ".seq", "must increase");
    p.tables.push_back(std::move(a));
  }
}

void parse_membound(element root, KernelsDb* db) {
  Reader r("membound.json");
  r.check_version(root);
  MemoryBoundParams& p = db->membound;
  p.floor_us = r.num(root, "floor_us", "");
  object classes;
  if (root["classes"].get(classes)) r.fail("classes", "expected an object");
  for (auto [key, val] : classes) {
    const std::string path = "classes." + std::string(key);
    r.str(val, "source", path);
    p.fraction[std::string(key)] = r.num(val, "fraction", path);
    element by_arch_field;
    if (!val["by_arch"].get(by_arch_field)) {
      object by_arch;
      if (by_arch_field.get(by_arch))
        r.fail(path + ".by_arch", "expected an object of architecture: fraction");
      for (auto [arch, f] : by_arch) {
        double v;
        if (f.get(v) || !(v > 0 && v <= 1))
          r.fail(path + ".by_arch." + std::string(arch), "expected a fraction in (0, 1]");
        p.arch_fraction[{parse_arch(r, std::string(arch), path + ".by_arch"), std::string(key)}] =
            v;
      }
    }
  }
  p.optimizer_bytes_per_param = r.num(root, "optimizer_bytes_per_param", "");
}

void parse_training(element root, KernelsDb* db) {
  Reader r("training.json");
  r.check_version(root);
  TrainingParams& p = db->training;
  auto positive = [&](const char* key, bool allow_zero) {
    const double v = r.sourced_required(root, key, "");
    if (!(v > 0 || (allow_zero && v == 0)) || v > 1e12)
      r.fail(key, allow_zero ? "must be >= 0" : "must be positive");
    return v;
  };
  p.cpu_launch_us = positive("cpu_launch_us", true);
  p.launch_latency_us = positive("launch_latency_us", true);
  p.event_call_us = positive("event_call_us", true);
  p.bucket_params = positive("bucket_params", false);
  p.bucket_params_per_dp_rank = positive("bucket_params_per_dp_rank", true);
}

void parse_carbon(element root, KernelsDb* db) {
  Reader r("carbon.json");
  r.check_version(root);
  CarbonParams& c = db->carbon;
  const element power = r.at(root, "power", ""), emb = r.at(root, "embodied", "");
  auto in = [&](element e, const char* key, const char* path, double lo, double hi) {
    const double v = r.sourced_required(e, key, path);
    if (!(v >= lo && v <= hi))
      r.fail(std::string(path) + "." + key,
             "must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  };
  c.compute_bound_fraction = in(power, "compute_bound_fraction", "power", 0, 1);
  c.memory_bound_fraction = in(power, "memory_bound_fraction", "power", 0, 1);
  c.comm_fraction = in(power, "comm_fraction", "power", 0, 1);
  c.node_overhead_w_per_gpu = in(power, "node_overhead_w_per_gpu", "power", 0, 1e5);
  c.pue = in(power, "pue", "power", kPueRange.min, kPueRange.max);
  c.gpu_embodied_kg = in(emb, "gpu_kg", "embodied", kEmbodiedRange.min, kEmbodiedRange.max);
  c.server_embodied_kg_per_gpu =
      in(emb, "server_kg_per_gpu", "embodied", kEmbodiedRange.min, kEmbodiedRange.max);
  c.lifetime_y = in(emb, "lifetime_y", "embodied", kLifetimeRange.min, kLifetimeRange.max);
  array regions;
  if (root["regions"].get(regions)) r.fail("regions", "expected an array");
  int i = 0;
  for (element e : regions) {
    const std::string path = "regions[" + std::to_string(i++) + "]";
    GridRegion g;
    g.name = r.str(e, "name", path);
    g.g_per_kwh = r.num(e, "g_per_kwh", path);
    if (!in_range(kGridIntensityRange, g.g_per_kwh))
      r.fail(path + ".g_per_kwh", "expected " + range_text(kGridIntensityRange));
    element year = r.at(e, "year", path);
    if (!year.is_null()) g.year = static_cast<int>(r.integer(e, "year", path));
    g.basis = r.str(e, "basis", path);
    if (g.basis != "lifecycle" && g.basis != "direct")
      r.fail(path + ".basis", "expected lifecycle or direct");
    g.source = r.str(e, "source", path);
    if (g.source.empty()) r.fail(path + ".source", "every value needs a source");
    c.regions.push_back(g);
  }
}

// One of `names` (index into them), or a failure listing them.
int choice(const Reader& r, element e, const char* key, const std::string& path,
           std::initializer_list<const char*> names) {
  const std::string v = r.str(e, key, path);
  std::string known;
  int i = 0;
  for (const char* n : names) {
    if (v == n) return i;
    known += (i++ ? ", " : "") + std::string(n);
  }
  r.fail(path + "." + key, "unknown value '" + v + "' (expected " + known + ")");
}

void parse_fp8_recipes(const Reader& r, element root, KernelsDb* db) {
  object recipes;
  if (root["fp8_recipes"].get(recipes)) r.fail("fp8_recipes", "expected an object");
  for (auto [key, e] : recipes) {
    const std::string path = "fp8_recipes." + std::string(key);
    Fp8Recipe f;
    f.name = std::string(key);
    // Byte counts lie in [0, 64]; `lowest` is below 0 for the one that can save bytes.
    auto bytes = [&](const char* k, double lowest = 0) {
      const double v = r.sourced_required(e, k, path);
      if (!(v >= lowest && v <= 64))
        r.fail(path + "." + k + ".value", strprintf("expected a number in [%g, 64]", lowest));
      return v;
    };
    // A recipe's on/off settings carry a source like its byte counts, so they are numbers: 0 or 1.
    auto flag = [&](const char* k) {
      const double v = r.sourced_required(e, k, path);
      if (v != 0 && v != 1) r.fail(path + "." + k + ".value", "expected 0 (off) or 1 (on)");
      return v == 1;
    };
    f.input_cast_bytes = bytes("input_cast_bytes");
    f.fused_input_cast_bytes = bytes("fused_input_cast_bytes");
    f.weight_cast_bytes = bytes("weight_cast_bytes");
    f.primary_weight_bytes = bytes("primary_weight_bytes");
    f.grad_cast_bytes = bytes("grad_cast_bytes");
    f.fused_grad_cast_bytes = bytes("fused_grad_cast_bytes");
    f.scale_update_kernels = bytes("scale_update_kernels");
    f.amax_reductions_per_pass = bytes("amax_reductions_per_pass");
    // A standard deviation of arrival times between replicas: up to 5 ms, the length of a short
    // model chunk's pass; beyond it the replicas would not be running one job in step.
    f.replica_skew_us = r.sourced_required(e, "replica_skew_us", path);
    if (!(f.replica_skew_us >= 0 && f.replica_skew_us <= 5000))
      r.fail(path + ".replica_skew_us.value", "expected a number in [0, 5000]");
    f.gather_fp8 = flag("gather_fp8");
    f.gathered_cast_bytes = bytes("gathered_cast_bytes");
    // Negative where a norm that writes FP8 writes less than it does in bf16.
    f.gathered_fused_cast_bytes = bytes("gathered_fused_cast_bytes", -2);
    f.gathered_transpose_bytes = bytes("gathered_transpose_bytes");
    f.fprop_fast_accum = flag("fprop_fast_accum");
    db->fp8_recipes[f.name] = f;
  }
  if (db->fp8_recipes.empty()) r.fail("fp8_recipes", "expected at least one recipe");
}

void parse_stacks(element root, KernelsDb* db) {
  Reader r("stacks.json");
  r.check_version(root);
  parse_fp8_recipes(r, root, db);
  object stacks;
  if (root["stacks"].get(stacks)) r.fail("stacks", "expected an object");
  for (auto [key, e] : stacks) {
    const std::string path = "stacks." + std::string(key);
    StackSpec s;
    s.name = std::string(key);
    s.description = r.str(e, "description", path);
    array sources;
    if (r.at(e, "sources", path).get(sources) || sources.size() == 0)
      r.fail(path + ".sources", "expected a non-empty array of strings");
    for (element x : sources) {
      std::string_view v;
      if (x.get(v) || v.empty()) r.fail(path + ".sources", "expected non-empty strings");
      s.sources.emplace_back(v);
    }
    s.attention = static_cast<AttentionImpl>(
        choice(r, e, "attention", path, {"unfused", "flash2", "flash3", "cudnn"}));
    s.fused_softmax = r.flag(e, "fused_softmax", path);
    s.dropout = r.flag(e, "dropout", path);
    s.fused_kernels = r.flag(e, "fused_kernels", path);
    auto non_negative = [&](const char* k) {
      const double v = r.num(e, k, path);
      if (!(v >= 0 && v < 1e9)) r.fail(path + "." + k, "expected a number in [0, 1e9)");
      return v;
    };
    if (!s.fused_kernels) {
      s.eager_norm_bytes = non_negative("eager_norm_bytes");
      s.eager_act_bytes = non_negative("eager_act_bytes");
      s.eager_rope_bytes = non_negative("eager_rope_bytes");
    }
    s.tp_overlap = static_cast<TpOverlap>(
        choice(r, e, "tp_overlap", path, {"none", "backward", "userbuffers"}));
    s.grad_reduce_overlap = r.flag(e, "grad_reduce_overlap", path);
    s.p2p_blocking = r.flag(e, "p2p_blocking", path);
    s.grad_reduce_bytes = non_negative("grad_reduce_bytes");
    if (s.grad_reduce_bytes != 2 && s.grad_reduce_bytes != 4)
      r.fail(path + ".grad_reduce_bytes", "expected 2 or 4");
    s.optimizer_bytes_per_param = non_negative("optimizer_bytes_per_param");
    s.grad_accumulation_bytes = non_negative("grad_accumulation_bytes");
    s.fp8_param_gather = r.flag(e, "fp8_param_gather", path);
    s.fp8_cast_fusion = static_cast<Fp8CastFusion>(
        choice(r, e, "fp8_cast_fusion", path, {"none", "norm", "norm_and_activation"}));
    s.selective = static_cast<SelectiveRecompute>(
        choice(r, e, "selective_recompute", path, {"attention_core", "every_other_matmul"}));
    s.cp_rotation =
        static_cast<CpRotation>(choice(r, e, "cp_rotation", path, {"ring", "allgather"}));
    s.sp_saved_input =
        static_cast<SpSavedInput>(choice(r, e, "sp_saved_input", path, {"shard", "gathered"}));
    s.recompute_early_stop = r.flag(e, "recompute_early_stop", path);
    s.separate_projections = r.flag(e, "separate_projections", path);
    const std::string recipe = r.str(e, "fp8_recipe", path);
    const auto it = db->fp8_recipes.find(recipe);
    if (it == db->fp8_recipes.end())
      r.fail(path + ".fp8_recipe", "'" + recipe + "' is not one of fp8_recipes");
    s.fp8 = it->second;
    if (!e["kernel_time_factor"].error()) {
      s.kernel_time_factor = r.num(e, "kernel_time_factor", path);
      if (!(s.kernel_time_factor >= 0.5 && s.kernel_time_factor <= 2))
        r.fail(path + ".kernel_time_factor", "expected a number in [0.5, 2]");
    }
    db->stacks[s.name] = std::move(s);
  }
  if (db->stacks.empty()) r.fail("stacks", "expected at least one stack");
  db->default_stack = r.str(root, "default", "");
  if (!db->stacks.count(db->default_stack))
    r.fail("default", "'" + db->default_stack + "' is not one of the stacks");
}

void parse_residuals(element root, KernelsDb* db) {
  Reader r("calibration.json");
  r.check_version(root);
  array runs;
  if (root["runs"].get(runs)) r.fail("runs", "expected an array");
  int i = 0;
  for (element e : runs) {
    const std::string path = "runs[" + std::to_string(i++) + "]";
    CalibrationResidual c;
    c.label = r.str(e, "label", path);
    c.gpu = r.str(e, "gpu", path);
    c.stack = r.str(e, "stack", path);
    c.gpus = r.num(e, "gpus", path);
    c.params = r.num(e, "params", path);
    c.error_pct = r.num(e, "error_pct", path);
    if (!(c.gpus >= 1 && c.params > 0 && c.error_pct > -100 && c.error_pct < 1000))
      r.fail(path, "expected gpus >= 1, params > 0 and error_pct in (-100, 1000)");
    if (!e["left_out_error_pct"].error()) {  // optional: written with cross-validation
      c.has_left_out = true;
      c.left_out_error_pct = r.num(e, "left_out_error_pct", path);
      c.source = r.str(e, "source", path);
      if (!(c.left_out_error_pct > -100 && c.left_out_error_pct < 1000))
        r.fail(path + ".left_out_error_pct", "expected a number in (-100, 1000)");
    }
    db->residuals.push_back(std::move(c));
  }
  element cov;
  if (!root["coverage"].get(cov)) {  // optional: written with cross-validation
    db->coverage.rows = static_cast<int>(r.integer(cov, "rows", "coverage"));
    db->coverage.inside = static_cast<int>(r.integer(cov, "inside", "coverage"));
    db->coverage.generated = r.str(cov, "generated", "coverage");
    if (!(db->coverage.rows >= 0 && db->coverage.inside >= 0 &&
          db->coverage.inside <= db->coverage.rows))
      r.fail("coverage", "expected 0 <= inside <= rows");
  }
}

int algo_index(const std::string& a) {
  if (a == "tree") return 0;
  if (a == "ring") return 1;
  if (a == "nvls") return 2;
  if (a == "nvls_tree") return 3;
  return -1;
}

void parse_nccl(element root, KernelsDb* db) {
  Reader r("nccl.json");
  r.check_version(root);
  NcclParams& p = db->nccl;
  const char* algos[] = {"tree", "ring", "nvls", "nvls_tree"};
  element base = r.at(root, "base_latency_us", "");
  for (int a = 0; a < 4; ++a)
    p.base_latency_us[a] = r.triple(r.at(base, algos[a], "base_latency_us"),
                                    std::string("base_latency_us.") + algos[a]);
  element hw = r.at(root, "hw_latency_us", "");
  const char* links[] = {"nvlink", "pci", "net"};
  for (int l = 0; l < 3; ++l) {
    element le = r.at(hw, links[l], "hw_latency_us");
    for (int a = 0; a < 4; ++a)
      p.hw_latency_us[l][a] = r.triple(r.at(le, algos[a], std::string("hw_latency_us.") + links[l]),
                                       std::string("hw_latency_us.") + links[l] + "." + algos[a]);
  }
  p.net_overhead_us = r.num(root, "net_overhead_us", "");
  p.ring_plateau_factor = r.num(root, "ring_plateau_factor", "");
  p.channels = static_cast<int>(r.integer(root, "channels", ""));
  object caps;
  if (root["caps"].get(caps)) r.fail("caps", "expected an object");
  for (auto [key, val] : caps) {
    const std::string path = "caps." + std::string(key);
    NcclCaps c;
    c.ll_max_bw = r.triple(r.at(val, "ll_max_bw", path), path + ".ll_max_bw");
    c.ring_ll128_per_ch = r.num(val, "ring_ll128_per_ch", path);
    c.tree_ll128_per_ch =
        r.triple(r.at(val, "tree_ll128_per_ch", path), path + ".tree_ll128_per_ch");
    c.tree_per_ch = r.triple(r.at(val, "tree_per_ch", path), path + ".tree_per_ch");
    c.nvls_tree_per_ch = r.triple(r.at(val, "nvls_tree_per_ch", path), path + ".nvls_tree_per_ch");
    r.str(val, "source", path);
    p.caps[parse_arch(r, std::string(key), path)] = c;
  }
  element nv = r.at(root, "nvls_efficiency", "");
  for (const char* a : {"hopper", "blackwell"})
    p.nvls_efficiency[parse_arch(r, a, "nvls_efficiency")] = r.num(nv, a, "nvls_efficiency");
  p.nvls_min_ranks_per_node = static_cast<int>(r.integer(root, "nvls_min_ranks_per_node", ""));
  element tc = r.at(root, "tree_correction", "");
  const char* protos[] = {"ll", "ll128", "simple"};
  for (int q = 0; q < 3; ++q) {
    const auto v =
        r.nums(r.at(tc, protos[q], "tree_correction"), std::string("tree_correction.") + protos[q]);
    if (v.size() != 24) r.fail(std::string("tree_correction.") + protos[q], "expected 24 entries");
    std::copy(v.begin(), v.end(), p.tree_correction[q].begin());
  }
  object topos;
  if (root["topologies"].get(topos)) r.fail("topologies", "expected an object");
  for (auto [key, val] : topos) {
    const std::string path = "topologies." + std::string(key);
    Topology t;
    t.name = std::string(key);
    t.gpus_per_node = static_cast<int>(r.integer(val, "gpus_per_node", path));
    t.nic_gbps = r.num(val, "nic_gbps", path);
    t.nics_per_gpu = static_cast<int>(r.integer(val, "nics_per_gpu", path));
    t.nic_efficiency = r.num(val, "nic_efficiency", path);
    // Optional calibration of a measured cluster; NCCL's constants as they are by default.
    const element topo_elem = val;  // lambdas cannot capture structured bindings (clang 14)
    auto opt = [&topo_elem](const char* key, double dflt) {
      double d;
      return topo_elem[key].get(d) ? dflt : d;
    };
    t.nvlink_efficiency = opt("nvlink_efficiency", 1.0);
    // One scale for every protocol, or [LL, LL128, Simple].
    if (val["base_latency_scale"].is_array()) {
      t.base_latency_scale =
          r.triple(val["base_latency_scale"].value(), path + ".base_latency_scale");
    } else {
      const double b = opt("base_latency_scale", 1.0);
      t.base_latency_scale = {b, b, b};
    }
    t.nvlink_latency_scale = opt("nvlink_latency_scale", 1.0);
    t.net_latency_scale = opt("net_latency_scale", 1.0);
    r.str(val, "source", path);
    if (t.gpus_per_node < 1 || t.nic_gbps <= 0 || t.nics_per_gpu < 1 || t.nic_efficiency <= 0 ||
        t.nic_efficiency > 1 || t.nvlink_efficiency <= 0 || t.nvlink_efficiency > 1 ||
        *std::min_element(t.base_latency_scale.begin(), t.base_latency_scale.end()) <= 0 ||
        t.nvlink_latency_scale <= 0 || t.net_latency_scale <= 0)
      r.fail(path, "sizes must be positive, efficiencies in (0, 1] and latency scales positive");
    p.topologies[t.name] = t;
  }
  object defs;
  if (root["default_topology"].get(defs)) r.fail("default_topology", "expected an object");
  for (auto [key, val] : defs) {
    std::string_view tv;
    if (val.get(tv)) r.fail("default_topology." + std::string(key), "expected a topology name");
    const std::string topo(tv);
    if (!p.topologies.count(topo))
      r.fail("default_topology." + std::string(key), "names unknown topology '" + topo + "'");
    p.default_topology[std::string(key)] = topo;
  }
  (void)algo_index;
}

void parse_kernel_classes(element root, KernelsDb* db) {
  Reader r("kernel_classes.json");
  r.check_version(root);
  array classes;
  if (root["classes"].get(classes)) r.fail("classes", "expected an array");
  int i = 0;
  for (element c : classes) {
    const std::string path = "classes[" + std::to_string(i++) + "]";
    KernelPattern k;
    k.kernel_class = r.str(c, "class", path);
    for (const char* key : {"prefixes", "contains"}) {
      array a;
      if (r.at(c, key, path).get(a)) r.fail(path + "." + key, "expected an array of strings");
      for (element s : a) {
        std::string_view sv;
        if (s.get(sv)) r.fail(path + "." + key, "expected an array of strings");
        std::string low(sv);
        std::transform(low.begin(), low.end(), low.begin(),
                       [](unsigned char ch) { return std::tolower(ch); });
        (std::string(key) == "prefixes" ? k.prefixes : k.contains).push_back(low);
      }
    }
    db->kernel_patterns.push_back(std::move(k));
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

const char* to_string(AttentionImpl a) {
  switch (a) {
    case AttentionImpl::kUnfused:
      return "unfused";
    case AttentionImpl::kFlash2:
      return "flash2";
    case AttentionImpl::kFlash3:
      return "flash3";
    case AttentionImpl::kCudnn:
      return "cudnn";
  }
  return "?";
}

const char* to_string(TpOverlap t) {
  return t == TpOverlap::kNone ? "none" : t == TpOverlap::kBackward ? "backward" : "userbuffers";
}

const char* to_string(SelectiveRecompute s) {
  return s == SelectiveRecompute::kAttentionCore ? "attention_core" : "every_other_matmul";
}

const char* to_string(Fp8CastFusion f) {
  return f == Fp8CastFusion::kNone   ? "none"
         : f == Fp8CastFusion::kNorm ? "norm"
                                     : "norm_and_activation";
}

const char* to_string(CpRotation r) {
  return r == CpRotation::kRing ? "ring" : "allgather";
}

const char* to_string(Arch a) {
  switch (a) {
    case Arch::kAmpere:
      return "ampere";
    case Arch::kHopper:
      return "hopper";
    case Arch::kBlackwell:
      return "blackwell";
  }
  return "?";
}

KernelsDb parse_db(const std::map<std::string, std::string>& files, const std::string& origin) {
  KernelsDb db;
  db.origin = origin;
  simdjson::dom::parser parser;
  auto root_of = [&](const char* name) {
    auto it = files.find(name);
    if (it == files.end())
      throw InputError("kernels_db/" + std::string(name) + ": missing (from " + origin + ")");
    element root;
    if (auto err = parser.parse(it->second).get(root))
      throw InputError("kernels_db/" + std::string(name) + ": invalid JSON" +
                       common::json_error_position(it->second) + ": " +
                       simdjson::error_message(err));
    return root;
  };
  parse_gpus(root_of("gpus.json"), &db);
  parse_gemm(root_of("gemm.json"), &db);
  parse_attention(root_of("attention.json"), &db);
  parse_membound(root_of("membound.json"), &db);
  parse_nccl(root_of("nccl.json"), &db);
  parse_kernel_classes(root_of("kernel_classes.json"), &db);
  parse_training(root_of("training.json"), &db);
  parse_stacks(root_of("stacks.json"), &db);
  parse_residuals(root_of("calibration.json"), &db);
  parse_carbon(root_of("carbon.json"), &db);
  // Tables, points and residuals name known GPUs, by their canonical names.
  for (AttentionTable& t : db.attention.tables) {
    t.gpu = db.gpu(t.gpu).name;
    t.gpu_arch = db.gpu(t.gpu).arch;
  }
  for (GemmPoint& p : db.gemm.points) p.gpu = db.gpu(p.gpu).name;
  for (CalibrationResidual& c : db.residuals) c.gpu = db.gpu(c.gpu).name;
  for (const GpuSpec& g : db.gpus) {
    if (!db.nccl.caps.count(g.arch))
      throw InputError("kernels_db/nccl.json: caps: no entry for " +
                       std::string(to_string(g.arch)) + " (GPU " + g.name + ")");
    if (!db.gemm.k_half.count(g.arch))
      throw InputError("kernels_db/gemm.json: architectures: no entry for " +
                       std::string(to_string(g.arch)) + " (GPU " + g.name + ")");
  }
  return db;
}

const KernelsDb& embedded_db() {
  static const KernelsDb db = [] {
    std::map<std::string, std::string> files;
    for (int i = 0; i < kEmbeddedDbCount; ++i) files[kEmbeddedDbNames[i]] = kEmbeddedDbTexts[i];
    return parse_db(files, "embedded");
  }();
  return db;
}

KernelsDb load_db(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const char* f : kFiles) {
    const std::string path = dir + "/" + f;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;  // reported by parse_db as missing
    const common::FileBytes b =
        common::read_regular_file(path, 0, common::max_trace_bytes(), "a kernels_db JSON file");
    files[f].assign(b.data.data(), b.size);
  }
  return parse_db(files, dir);
}

const GpuSpec& KernelsDb::gpu(const std::string& name) const {
  for (const GpuSpec& g : gpus)
    if (g.name == name) return g;  // the common case, without allocating
  const std::string want = lower(name);
  for (const GpuSpec& g : gpus) {
    if (lower(g.name) == want) return g;
    for (const auto& a : g.aliases)
      if (lower(a) == want) return g;
  }
  std::string known;
  std::vector<std::string> names;
  for (const GpuSpec& g : gpus) {
    known += (known.empty() ? "" : ", ") + g.name;
    names.push_back(g.name);
    names.insert(names.end(), g.aliases.begin(), g.aliases.end());
  }
  throw InputError("unknown GPU '" + name + "'" + did_you_mean(name, names) + " (known: " + known +
                   ")");
}

const StackSpec& KernelsDb::stack(const std::string& name) const {
  auto it = stacks.find(name);
  if (it != stacks.end()) return it->second;
  throw InputError("unknown software stack '" + name + "' (known: " + stack_names() + ")");
}

std::string KernelsDb::stack_names() const {
  std::string known;
  for (const auto& [k, v] : stacks) known += (known.empty() ? "" : ", ") + k;
  return known;
}

const Topology& KernelsDb::topology(const std::string& name) const {
  auto it = nccl.topologies.find(name);
  if (it != nccl.topologies.end()) return it->second;
  std::string known;
  for (const auto& [k, v] : nccl.topologies) known += (known.empty() ? "" : ", ") + k;
  throw InputError("unknown topology '" + name + "' (known: " + known + ")");
}

const Topology& KernelsDb::default_topology_for(const GpuSpec& g) const {
  auto it = nccl.default_topology.find(g.name);
  if (it == nccl.default_topology.end())
    throw InputError("kernels_db/nccl.json: no default topology for GPU '" + g.name + "'");
  return topology(it->second);
}

const GridRegion& CarbonParams::region(const std::string& name) const {
  std::string want = name;
  for (char& ch : want) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const GridRegion& g : regions)
    if (g.name == want) return g;
  std::string known;  // only for the message: sweeps look regions up once per row
  std::vector<std::string> names;
  for (const GridRegion& g : regions) {
    if (!known.empty()) known += ", ";
    known += g.name;
    names.push_back(g.name);
  }
  throw InputError("unknown region '" + name + "'" + did_you_mean(want, names) +
                   " (kernels_db/carbon.json has: " + known + ")");
}

GpuSpec with_nvlink_gbps(const GpuSpec& gpu, double gbps) {
  LUMOS_EXPECT(gbps > 0 && std::isfinite(gbps),
               "--nvlink-bandwidth: expected a positive bandwidth, got " + std::to_string(gbps));
  GpuSpec out = gpu;
  out.nccl_link_gbps = gpu.nccl_link_gbps * gbps / gpu.nvlink_gbps;
  out.nvlink_gbps = gbps;
  return out;
}

}  // namespace lumos::cost
