// GCC 12 warns falsely inside cxxopts' integer parsing as inlined into this file (-Wrestrict, its
// bug 105329: a memcpy of 2^63 bytes on a path that cannot run).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "cli/sweep_options.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "cli/count_options.hpp"
#include "cli/decimal_options.hpp"
#include "cli/headroom_option.hpp"
#include "cli/model_options.hpp"
#include "cli/path_options.hpp"
#include "cli/traced_options.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "engine/engine.hpp"
#include "model/model_spec.hpp"
#include "sweep/option_text.hpp"
#include "sweep/pareto_csv.hpp"
#include "sweep/sweep_file.hpp"

namespace lumos::cli {
namespace {

constexpr CountOption kTop{"top", 0, 1000000}, kThreads{"threads", 0, 4096};
// The sweep's definition as text, for its fingerprint: equal for every shard of one command.
std::string describe(const sweep::SweepSpec& s, const std::map<std::string, std::string>& read) {
  const model::ModelSpec& m = s.model;
  std::string d =
      std::string("lumos ") + LUMOS_VERSION + "\nmodel " + m.name + " " + std::to_string(m.layers) +
      " " + std::to_string(m.hidden) + " " + std::to_string(m.ffn) + " " + std::to_string(m.heads) +
      " " + std::to_string(m.kv_heads) + " " + std::to_string(m.head_dim) + " " +
      std::to_string(m.vocab) + " " + std::to_string(m.seq) + " " + model::to_string(m.act) + "\n";
  for (const auto& [k, v] : read) d += k + "=" + v + "\n";
  return d + strprintf("tokens=%.17g\n", s.tokens_to_train);
}

}  // namespace

void sweep_options(cxxopts::Options& o) {
  model_options(o, "gpt3-175b");
  traced_options(o);
  o.add_options()("gpus",
                  "total GPUs (axis, e.g. 64..1024); dp follows each layout (default, without "
                  "--dp: 256..1024)",
                  cxxopts::value<std::string>())(
      "dp", "data-parallel degrees (axis), when --gpus is not given",
      cxxopts::value<std::string>())("tp", "tensor-parallel degrees (axis)",
                                     cxxopts::value<std::string>()->default_value("1,2,4,8"))(
      "cp", "context-parallel degrees (axis)", cxxopts::value<std::string>()->default_value("1"))(
      "pp", "pipeline-parallel degrees (axis)",
      cxxopts::value<std::string>()->default_value("1,2,4,8"))(
      "interleave", "virtual stages per GPU (axis)",
      cxxopts::value<std::string>()->default_value("1"))(
      "mbs", "micro-batch sizes (axis)", cxxopts::value<std::string>()->default_value("1"))(
      "gbs", "global batch sizes in sequences (axis)",
      cxxopts::value<std::string>()->default_value("1536"))(
      "recompute", "none, selective, full (list)",
      cxxopts::value<std::string>()->default_value("none"))(
      "sp", "sequence parallel: on, off, auto (on when tp > 1) (list)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "dist-opt", "distributed optimizer: on, off, auto (on when dp x cp > 1 without FSDP) (list)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "stack", "software stacks (list; default: megatron-core)", cxxopts::value<std::string>())(
      "fsdp", "fully sharded data parallel: on, off (list)",
      cxxopts::value<std::string>()->default_value("off"))(
      "dtype", "GEMM precisions: bf16, fp16, fp8 (list)",
      cxxopts::value<std::string>()->default_value("bf16"))(
      "gpu", "GPU types (list)", cxxopts::value<std::string>()->default_value("h100,h200,b200"))(
      "topology", "network topologies (list; default: each GPU's)", cxxopts::value<std::string>())(
      "speed", "per-class kernel speed-ups, e.g. 'compute=1,2;comm=1,0.5' (each a list)",
      cxxopts::value<std::string>())(
      "nic-bandwidth",
      "NIC line rates with their unit (list, e.g. 200Gbps,400Gbps; default: the "
      "topology's)",
      cxxopts::value<std::string>())(
      "region", "grid regions for operational carbon (list; kernels_db/carbon.json)",
      cxxopts::value<std::string>()->default_value("world"))(
      "pue", "datacenter PUE, each in [1, 5] (list; default: kernels_db/carbon.json's)",
      cxxopts::value<std::string>())("gpus-per-node",
                                     "GPUs per node (list; default: the topology's)",
                                     cxxopts::value<std::string>())(
      "nvlink-bandwidth",
      "NVLink bandwidths per direction with their unit (list, e.g. 450GB/s,900GB/s; default: "
      "the GPU's)",
      cxxopts::value<std::string>())("tokens", "tokens to train, for time to train and GPU-hours",
                                     decimal_value("300e9"))(
      "objectives", "Pareto objectives: 2 or 3 columns, minimised ('-' prefix: maximised)",
      cxxopts::value<std::string>()->default_value(sweep::kDefaultObjectives))(
      "o,output", "variants CSV", cxxopts::value<std::string>())("pareto", "Pareto front CSV",
                                                                 cxxopts::value<std::string>())(
      kTop.name, count_help("configurations shown", kTop), count_value("10"))(
      "shard",
      "run part i of n (i/n); its CSVs start with a #lumos-sweep line naming the sweep and the "
      "shard; merge them with lumos pareto --merge",
      cxxopts::value<std::string>())(
      kThreads.name, count_help("worker threads (0: all cores)", kThreads), count_value("0"))(
      "memory",
      "bytes of graphs built at once, e.g. 4GiB (larger lets more graphs build in parallel)",
      cxxopts::value<std::string>()->default_value("4GiB"))(
      "fold",
      "on: runs of identical layers fold into max-plus matrices (same results, fewer nodes); "
      "off: every layer is built, to check",
      cxxopts::value<std::string>()->default_value("on"))(
      "backend",
      "batch replay backend: auto (the GPU when one is visible; `lumos info` says which), cpu "
      "or cuda",
      cxxopts::value<std::string>()->default_value("auto"))(
      "trace",
      "trace-driven: a trace or a folder of rank traces of the job (with --model for its "
      "dimensions); its configuration is the default of every axis, its calibration applies to "
      "all",
      cxxopts::value<std::string>())(
      "spec", "TOML sweep file ([model] and [sweep] with these options; the command line wins)",
      cxxopts::value<std::string>())("db", "read kernels_db from this folder",
                                     cxxopts::value<std::string>());
  // Rows with less room count as not feasible, in the CSVs too, so that `lumos pareto` over them
  // finds the same front.
  add_min_headroom_option(o, "");
  o.add_options()("json",
                  "print the report as JSON (the counts, the fastest and the Pareto front)")(
      "h,help", "show this help");
}

SweepRequest sweep_request(const cxxopts::ParseResult& a, const cost::KernelsDb& db,
                           const MpiWorld& world) {
  sweep::SweepFile file;
  if (a.count("spec"))
    file = sweep::load_sweep_file(a["spec"].as<std::string>(), sweep::sweep_file_options());
  auto given = [&](const char* k) { return a.count(k) > 0 || file.options.count(k) > 0; };
  std::map<std::string, std::string> read;  // every option the sweep is built from
  auto text = [&](const char* k) {
    const bool in_file = !a.count(k) && file.options.count(k);
    const std::string v = in_file ? file.options.at(k) : a[k].as<std::string>();
    read[k] = v;
    return v;
  };
  // Before any work: no output may be an input (the sweep file's trace included) or the other.
  std::vector<common::RolePath> traced;
  if (given("trace")) traced.push_back({text("trace"), "the traced job (--trace)"});
  check_paths("lumos sweep", a, {{"spec", "the sweep file (--spec)"}, kModelFileInput, kDbInput},
              {{"output", "-o"}, {"pareto", "--pareto"}}, traced);
  SweepRequest q;
  q.spec.model = model_from(a, file.model ? &*file.model : nullptr);
  // An axis the file gave is named as the file writes it, not as the flag it stands for.
  auto name = [&](const char* k) {
    if (a.count(k) || !file.options.count(k)) return std::string("--") + k;
    std::string key = k;
    std::replace(key.begin(), key.end(), '-', '_');
    return a["spec"].as<std::string>() + ": [sweep] " + key;
  };
  sweep::parse_axes({given, text, name}, &q.spec);
  LUMOS_EXPECT(
      given("trace") || !(a.count("traced") || a.count("group")),
      "lumos sweep: --traced and --group say what the traced job is: they go with --trace");
  if (given("trace")) {
    LUMOS_EXPECT(a.count("model") || a.count("model-file") || file.model,
                 "lumos sweep --trace: give the traced model's dimensions (--model PRESET or "
                 "--model-file FILE); its layer count comes from the trace");
    q.traced =
        estimate::trace_sweep(text("trace"), given, db, &q.spec, hints_from(a, "lumos sweep"));
    warn_overridden(std::cerr, q.traced->traced.structure, "lumos sweep");
  }
  // The model is checked as `lumos estimate` checks it, once for the whole sweep: a bad model
  // is bad input, not a sweep of configurations that are all infeasible.
  model::validate(q.spec.model);
  q.spec.tokens_to_train = decimal_of(a, "tokens", "lumos sweep");
  if (!a.count("tokens") && file.options.count("tokens"))
    q.spec.tokens_to_train =
        sweep::parse_tokens(file.options.at("tokens"), a["spec"].as<std::string>());
  LUMOS_EXPECT(q.spec.tokens_to_train >= 1 && q.spec.tokens_to_train < 1e18,
               "--tokens: expected a number of tokens from 1 to below 1e18");
  q.min_headroom_fraction = min_headroom_of(a, "lumos sweep");
  // It changes the CSVs' feasible cells: shards merged must agree on it.
  if (a.count("min-headroom")) read["min-headroom"] = strprintf("%.17g", q.min_headroom_fraction);
  q.json = a.count("json") > 0;
  q.description = describe(q.spec, read);
  q.objectives = text("objectives");
  sweep::parse_objectives(q.objectives);
  q.top = static_cast<int>(count_of(a, kTop));
  q.opt = sweep::parse_run_options(
      a.count("shard") ? std::optional(a["shard"].as<std::string>()) : std::nullopt,
      static_cast<int>(count_of(a, kThreads)), a["memory"].as<std::string>(),
      a["fold"].as<std::string>());
  q.opt.backend = engine::parse_backend(a["backend"].as<std::string>());
  LUMOS_EXPECT(q.opt.backend != engine::Backend::kReference,
               "lumos sweep: --backend reference: expected auto, cpu or cuda");
  // Before the work, not at the first batch.
  LUMOS_EXPECT(q.opt.backend != engine::Backend::kCuda || engine::cuda_available(),
               std::string("lumos sweep: --backend cuda: ") +
                   (engine::cuda_built() ? "no GPU is visible to the CUDA runtime"
                                         : "this lumos was built without CUDA"));
  // Outputs are checked before the work, so that a bad path does not cost the sweep.
  int to_stdout = 0;
  for (const char* k : {"output", "pareto"}) {
    if (!a.count(k)) continue;
    const std::string path = a[k].as<std::string>();
    to_stdout += is_stdout(path) ? 1 : 0;
    if (!is_stdout(path)) check_output_path(path);
  }
  LUMOS_EXPECT(to_stdout < 2, "lumos sweep: -o - and --pareto - both write to standard output");
  LUMOS_EXPECT(to_stdout == 0 || !q.json,
               "lumos sweep: --json and a CSV on standard output (-) both write to it");
  if (world.size() > 1) {
    LUMOS_EXPECT(!a.count("shard"),
                 "lumos sweep: --shard and mpirun both split the sweep; use one");
    q.opt.shard = static_cast<uint32_t>(world.rank());
    q.opt.shards = static_cast<uint32_t>(world.size());
  }
  return q;
}

}  // namespace lumos::cli
