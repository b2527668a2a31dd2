// lumos sweep: many configurations of one model through the batch engine, the variants and their
// Pareto front to CSV. The work is sweep/'s (estimate/traced_sweep.hpp for --trace); the CSVs and
// the report are report/'s.
#include <unistd.h>
#include <cxxopts.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>

#include "cli/commands.hpp"
#include "cli/model_options.hpp"
#include "cli/mpi_world.hpp"
#include "common/atomic_file.hpp"
#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "common/heap_tuning.hpp"
#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "cost/size_units.hpp"
#include "estimate/traced_sweep.hpp"
#include "report/sweep_csv.hpp"
#include "report/sweep_report.hpp"
#include "sweep/option_text.hpp"
#include "sweep/pareto_csv.hpp"
#include "sweep/shard_merge.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_run.hpp"

namespace lumos::cli {
namespace {

void sweep_options(cxxopts::Options& o) {
  model_options(o, "gpt3-175b");
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
      "pue", "datacenter PUE (list; default: kernels_db/carbon.json's)",
      cxxopts::value<std::string>())("gpus-per-node",
                                     "GPUs per node (list; default: the topology's)",
                                     cxxopts::value<std::string>())(
      "nvlink-bandwidth",
      "NVLink bandwidths per direction with their unit (list, e.g. 450GB/s,900GB/s; default: "
      "the GPU's)",
      cxxopts::value<std::string>())("tokens", "tokens to train, for time to train and GPU-hours",
                                     cxxopts::value<double>()->default_value("300e9"))(
      "objectives", "Pareto objectives: 2 or 3 columns, minimised ('-' prefix: maximised)",
      cxxopts::value<std::string>()->default_value(sweep::kDefaultObjectives))(
      "o,output", "variants CSV", cxxopts::value<std::string>())("pareto", "Pareto front CSV",
                                                                 cxxopts::value<std::string>())(
      "top", "configurations shown", cxxopts::value<int>()->default_value("10"))(
      "shard", "run part i of n (i/n); merge the CSVs with lumos pareto --merge",
      cxxopts::value<std::string>())("threads", "worker threads (0: all cores)",
                                     cxxopts::value<int>()->default_value("0"))(
      "memory",
      "bytes of graphs built at once, e.g. 4GiB (larger lets more graphs build in parallel)",
      cxxopts::value<std::string>()->default_value("4GiB"))(
      "fold",
      "on: runs of identical layers fold into max-plus matrices (same results, fewer nodes); "
      "off: every layer is built, to check",
      cxxopts::value<std::string>()->default_value("on"))(
      "trace",
      "trace-driven: a trace or a folder of rank traces of the job (with --model for its "
      "dimensions); its configuration is the default of every axis, its calibration applies to "
      "all",
      cxxopts::value<std::string>())(
      "spec", "TOML sweep file ([model] and [sweep] with these options; the command line wins)",
      cxxopts::value<std::string>())("db", "read kernels_db from this folder",
                                     cxxopts::value<std::string>())("h,help", "show this help");
}

// The sweep asked for: the spec (its axes from the command line, else the sweep file, else the
// defaults), how it runs, and what is shown.
struct Request {
  sweep::SweepSpec spec;
  std::unique_ptr<estimate::TracedSweep> traced;  // --trace: its calibration, used while it runs
  sweep::SweepOptions opt;
  std::string objectives;
  int top = 10;
};

Request parse_request(const cxxopts::ParseResult& a, const cost::KernelsDb& db,
                      const MpiWorld& world) {
  sweep::SweepFile file;
  if (a.count("spec"))
    file = sweep::load_sweep_file(a["spec"].as<std::string>(), sweep::sweep_file_options());
  auto given = [&](const char* k) { return a.count(k) > 0 || file.options.count(k) > 0; };
  auto text = [&](const char* k) {
    if (!a.count(k) && file.options.count(k)) return file.options.at(k);
    return a[k].as<std::string>();
  };
  Request q;
  q.spec.model = model_from(a, file.model ? &*file.model : nullptr);
  sweep::parse_axes({given, text}, &q.spec);
  if (given("trace")) {
    LUMOS_EXPECT(a.count("model") || a.count("model-file") || file.model,
                 "lumos sweep --trace: give the traced model's dimensions (--model PRESET or "
                 "--model-file FILE); its layer count comes from the trace");
    q.traced = estimate::trace_sweep(text("trace"), given, db, &q.spec);
  }
  q.spec.tokens_to_train = a["tokens"].as<double>();
  if (!a.count("tokens") && file.options.count("tokens"))
    q.spec.tokens_to_train =
        sweep::parse_tokens(file.options.at("tokens"), a["spec"].as<std::string>());
  LUMOS_EXPECT(q.spec.tokens_to_train > 0 && q.spec.tokens_to_train < 1e18,
               "--tokens: expected a positive number of tokens below 1e18");
  q.objectives = text("objectives");
  sweep::parse_objectives(q.objectives);
  q.top = a["top"].as<int>();
  LUMOS_EXPECT(q.top >= 0, "--top: expected a count >= 0");
  sweep::SweepOptions& opt = q.opt;
  if (a.count("shard"))
    std::tie(opt.shard, opt.shards) = sweep::parse_shard(a["shard"].as<std::string>());
  opt.threads = a["threads"].as<int>();
  opt.memory_budget_bytes = cost::parse_bytes(a["memory"].as<std::string>(), "--memory");
  LUMOS_EXPECT(opt.memory_budget_bytes >= 64.0 * 1024 * 1024,
               "lumos sweep: --memory must be at least 64MiB");
  LUMOS_EXPECT(opt.threads >= 0 && opt.threads <= 4096, "--threads: expected 0 to 4096");
  const std::string fold = a["fold"].as<std::string>();
  LUMOS_EXPECT(fold == "on" || fold == "off", "--fold " + fold + ": expected on or off");
  opt.fold_layers = fold == "on";
  LUMOS_EXPECT(
      !(a.count("output") && a.count("pareto") && is_stdout(a["output"].as<std::string>()) &&
        is_stdout(a["pareto"].as<std::string>())),
      "lumos sweep: -o - and --pareto - both write to standard output");
  // Outputs are checked before the work, so that a bad path does not cost the sweep.
  for (const char* k : {"output", "pareto"})
    if (a.count(k) && !is_stdout(a[k].as<std::string>())) check_output_path(a[k].as<std::string>());
  if (world.size() > 1) {
    LUMOS_EXPECT(!a.count("shard"),
                 "lumos sweep: --shard and mpirun both split the sweep; use one");
    opt.shard = static_cast<uint32_t>(world.rank());
    opt.shards = static_cast<uint32_t>(world.size());
  }
  return q;
}

int run_sweep_command(int argc, char** argv, const MpiWorld& world) {
  cxxopts::Options o("lumos sweep",
                     "Many configurations of a model through the batch engine; variants and their "
                     "Pareto front to CSV.");
  sweep_options(o);
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  Request q = parse_request(a, db, world);
  const Progress progress("configurations");
  q.opt.progress = [&](uint64_t done, uint64_t total) { progress(done, total); };
  keep_freed_graph_memory();
  const sweep::SweepResult r = sweep::run_sweep(q.spec, db, q.opt);
  // The front is taken over the cells as the variants CSV holds them, as `lumos pareto` does.
  const std::string source = "over " + q.objectives;
  report::SweepReport rep{r.stats, nullptr, {}, q.top, world.size(), {}};
  CsvView table = report::sweep_view(r, source);
  CsvTable gathered;
  if (world.size() > 1) {
    std::ostringstream csv;
    report::sweep_csv(csv, r);
    const std::vector<std::string> parts =
        world.gather(sweep::stats_line(r.stats) + "\n" + csv.str());
    if (world.rank() > 0) return 0;
    gathered = sweep::merge_gathered(parts, source, &rep.stats);
    table = csv_view(gathered);
  }
  rep.table = &table;
  rep.front = sweep::pareto_rows(table, sweep::parse_objectives(q.objectives));
  std::vector<size_t> all(table.rows);
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto path = [&](const char* k) { return a.count(k) ? a[k].as<std::string>() : ""; };
  if (a.count("output"))
    write_output(path("output"), [&](std::ostream& os) { report::write_csv(os, table, all); });
  if (a.count("pareto"))
    write_output(path("pareto"),
                 [&](std::ostream& os) { report::write_csv(os, table, rep.front); });
  // A CSV on standard output keeps it to itself: the report goes to standard error.
  bool csv_to_stdout = false;
  for (const char* k : {"output", "pareto"}) {
    if (a.count(k) && is_stdout(path(k))) csv_to_stdout = true;
    if (a.count(k) && !is_stdout(path(k))) rep.wrote.push_back(path(k));
  }
  report::print_sweep(csv_to_stdout ? std::cerr : std::cout, rep);
  return 0;
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  // Under mpirun each rank runs one shard; rank 0 gathers the rows and writes everything. The
  // other ranks print nothing: their errors on the same inputs are rank 0's. An error on one
  // rank alone (a file only it cannot read) would leave the others waiting in the gather, so
  // under MPI the ranks agree on who failed: the lowest failing rank prints its one line and every
  // rank exits 1.
  const MpiWorld world;
  const int own_stderr = world.rank() > 0 ? dup(STDERR_FILENO) : -1;
  if (world.rank() > 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
  }
  if (world.size() == 1) return run_sweep_command(argc, argv, world);
  try {
    return run_sweep_command(argc, argv, world);
  } catch (const PeerFailed&) {
    return 1;  // the rank that failed reports
  } catch (const std::exception& e) {
    // Before the gather every rank agrees who reports (the lowest failing rank); after it, only
    // rank 0 is still working and no rank waits.
    if (!world.gathered() && world.fail() != world.rank()) return 1;
    const std::string line = "lumos: " + std::string(e.what()) + "\n";
    const int fd = world.rank() > 0 ? own_stderr : STDERR_FILENO;
    if (fd >= 0 && write(fd, line.data(), line.size()) < 0) return 1;
    return 1;
  }
}

}  // namespace lumos::cli
