// lumos sweep: many configurations of one model through the batch engine, the variants and their
// Pareto front to CSV; lumos pareto: a front recomputed from variants CSVs, or shards' CSVs
// merged.
#include <unistd.h>
#include <cxxopts.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include "cli/commands.hpp"
#include "cli/model_options.hpp"
#include "cli/mpi_world.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/heap_tuning.hpp"
#include "cost/kernels_db.hpp"
#include "cost/size_units.hpp"
#include "estimate/trace_structural.hpp"
#include "graph/load_input.hpp"
#include "report/sweep_csv.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_run.hpp"
#include "whatif/speed_axes.hpp"

namespace lumos::cli {
namespace {

using sweep::parse_int_axis;
using sweep::parse_name_axis;

constexpr const char* kDefaultObjectives = "time_to_train_h,gpu_hours,operational_kg";

// What a sweep file's [sweep] table may set: the options that describe the sweep.
const std::vector<std::string> kFileOptions = {"gpus",
                                               "dp",
                                               "tp",
                                               "cp",
                                               "pp",
                                               "interleave",
                                               "mbs",
                                               "gbs",
                                               "recompute",
                                               "sp",
                                               "dist-opt",
                                               "fsdp",
                                               "stack",
                                               "dtype",
                                               "gpu",
                                               "topology",
                                               "nic-bandwidth",
                                               "gpus-per-node",
                                               "nvlink-bandwidth",
                                               "region",
                                               "pue",
                                               "tokens",
                                               "objectives",
                                               "trace",
                                               "speed"};

std::vector<int> parse_switch_axis(const std::string& text, const std::string& what) {
  std::vector<int> out;
  for (const std::string& s : parse_name_axis(text, what)) {
    LUMOS_EXPECT(s == "on" || s == "off" || s == "auto",
                 what + ": '" + s + "': expected on, off or auto");
    out.push_back(s == "auto" ? -1 : s == "on" ? 1 : 0);
  }
  return out;
}

// A non-negative integer of at most 15 digits; `what` names it in the error.
uint64_t parse_count(const std::string& s, const std::string& what) {
  LUMOS_EXPECT(!s.empty() && s.size() <= 15 &&
                   std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }),
               what + ": '" + s + "' is not a non-negative integer");
  return std::stoull(s);
}

std::pair<uint32_t, uint32_t> parse_shard(const std::string& s) {
  const size_t slash = s.find('/');
  LUMOS_EXPECT(slash != std::string::npos, "--shard " + s + ": expected i/n, e.g. 0/4");
  const uint64_t i = parse_count(s.substr(0, slash), "--shard");
  const uint64_t n = parse_count(s.substr(slash + 1), "--shard");
  LUMOS_EXPECT(n >= 1 && n <= 100000 && i < n,
               "--shard " + s + ": expected i/n with 0 <= i < n <= 100000");
  return {static_cast<uint32_t>(i), static_cast<uint32_t>(n)};
}

std::vector<std::string> parse_objectives(const std::string& s) {
  std::vector<std::string> o = parse_name_axis(s, "--objectives");
  LUMOS_EXPECT(o.size() == 2 || o.size() == 3,
               "--objectives " + s + ": expected two or three columns");
  return o;
}

// The progress of a long sweep on a terminal: rows done, rate and time left, on one line.
struct Progress {
  bool on = isatty(STDERR_FILENO) != 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void operator()(uint64_t done, uint64_t total) const {
    if (!on || total == 0) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double eta = done > 0 ? s * static_cast<double>(total - done) / done : 0;
    std::fprintf(stderr, "\r  %llu / %llu configurations, %.0f/s, %.0f s left   ",
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                 s > 0 ? done / s : 0.0, eta);
    if (done == total) std::fprintf(stderr, "\n");
  }
};

// Stats travel between ranks as one line of numbers.
std::string stats_line(const sweep::SweepStats& s) {
  return strprintf(
      "%llu %llu %llu %llu %llu %.17g %.17g %.17g %.17g %.17g",
      static_cast<unsigned long long>(s.variants), static_cast<unsigned long long>(s.rows),
      static_cast<unsigned long long>(s.groups), static_cast<unsigned long long>(s.graphs),
      static_cast<unsigned long long>(s.estimated), s.build_s, s.price_s, s.replay_s, s.wait_s,
      s.total_s);
}
sweep::SweepStats add_stats(sweep::SweepStats sum, const std::string& line) {
  std::istringstream in(line);
  sweep::SweepStats s;
  in >> s.variants >> s.rows >> s.groups >> s.graphs >> s.estimated >> s.build_s >> s.price_s >>
      s.replay_s >> s.wait_s >> s.total_s;
  LUMOS_EXPECT(!in.fail(), "lumos sweep: a rank sent unreadable statistics");
  sum.variants = s.variants;
  sum.rows += s.rows, sum.groups += s.groups, sum.graphs += s.graphs;
  sum.estimated += s.estimated;
  sum.build_s += s.build_s, sum.price_s += s.price_s, sum.replay_s += s.replay_s;
  sum.wait_s += s.wait_s, sum.total_s = std::max(sum.total_s, s.total_s);
  return sum;
}

double number(const report::CsvTable& t, size_t row, const char* column) {
  return std::stod(t.rows[row][t.column(column)]);
}

void print_top(std::ostream& os, const sweep::SweepStats& stats, const report::CsvTable& t,
               const std::vector<size_t>& front, int top) {
  const size_t feasible = t.column("feasible");
  std::vector<size_t> ok;
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (t.rows[i][feasible] == "1") ok.push_back(i);
  std::vector<double> ttt(t.rows.size(), 0.0);
  for (size_t i : ok) ttt[i] = number(t, i, "time_to_train_h");
  std::stable_sort(ok.begin(), ok.end(), [&](size_t x, size_t y) { return ttt[x] < ttt[y]; });
  os << strprintf(
      "%llu configurations (%llu in this shard): %llu estimated, %zu feasible, %zu on the "
      "Pareto front; %llu graphs built in %.2f s\n",
      static_cast<unsigned long long>(stats.variants), static_cast<unsigned long long>(stats.rows),
      static_cast<unsigned long long>(stats.estimated), ok.size(), front.size(),
      static_cast<unsigned long long>(stats.graphs), stats.total_s);
  if (ok.empty()) {
    os << "no configuration is feasible; the variants CSV says why for each\n";
    return;
  }
  auto cell = [&](size_t row, const char* column) { return t.rows[row][t.column(column)]; };
  os << strprintf("fastest %d to train:\n", std::min<int>(top, static_cast<int>(ok.size())));
  os << "  gpu      NIC(GB/s)  gpus  tp cp pp   dp  v mbs  step(s)  tokens/s    MFU  "
        "train(h)  GPU-hours  energy(MWh)  CO2(t)  speed\n";
  for (int i = 0; i < top && i < static_cast<int>(ok.size()); ++i) {
    const size_t r = ok[static_cast<size_t>(i)];
    os << strprintf(
        "  %-8s %9s %5s %3s %2s %2s %4s %2s %3s %8.3f %9.4g %6.3f %9.1f %10.4g %12.4g %7.4g  %s\n",
        cell(r, "gpu").c_str(), cell(r, "nic_gbps").c_str(), cell(r, "gpus").c_str(),
        cell(r, "tp").c_str(), cell(r, "cp").c_str(), cell(r, "pp").c_str(), cell(r, "dp").c_str(),
        cell(r, "interleave").c_str(), cell(r, "mbs").c_str(), number(t, r, "step_time_s"),
        number(t, r, "tokens_per_s"), number(t, r, "mfu"), ttt[r], number(t, r, "gpu_hours"),
        number(t, r, "energy_kwh") / 1000.0, number(t, r, "operational_kg") / 1000.0,
        cell(r, "speed").c_str());
  }
  if (front.empty()) return;
  os << "Pareto front (" << t.source << "):\n";
  for (size_t k = 0; k < front.size() && static_cast<int>(k) < top; ++k) {
    const size_t r = front[k];
    os << strprintf(
        "  %-8s %5s GPUs  tp %-2s pp %-2s dp %-4s  %8.1f h  %10.4g GPU-h  %10.4g kWh  %8.4g "
        "tCO2 (%s)\n",
        cell(r, "gpu").c_str(), cell(r, "gpus").c_str(), cell(r, "tp").c_str(),
        cell(r, "pp").c_str(), cell(r, "dp").c_str(), number(t, r, "time_to_train_h"),
        number(t, r, "gpu_hours"), number(t, r, "energy_kwh"),
        number(t, r, "operational_kg") / 1000.0, cell(r, "region").c_str());
  }
}

}  // namespace

static int run_sweep_command(int argc, char** argv, const MpiWorld& world);

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

static int run_sweep_command(int argc, char** argv, const MpiWorld& world) {
  cxxopts::Options o("lumos sweep",
                     "Many configurations of a model through the batch engine; variants and their "
                     "Pareto front to CSV.");
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
      cxxopts::value<std::string>()->default_value(kDefaultObjectives))(
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
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  // An option's text: the command line's, else the sweep file's, else its default.
  sweep::SweepFile file;
  if (a.count("spec")) file = sweep::load_sweep_file(a["spec"].as<std::string>(), kFileOptions);
  auto given = [&](const char* k) { return a.count(k) > 0 || file.options.count(k) > 0; };
  auto text = [&](const char* k) {
    if (!a.count(k) && file.options.count(k)) return file.options.at(k);
    return a[k].as<std::string>();
  };
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  sweep::SweepSpec spec;
  spec.model = model_from(a, file.model ? &*file.model : nullptr);
  if (given("gpus")) spec.total_gpus = parse_int_axis(text("gpus"), "--gpus");
  if (!given("gpus") && !given("dp")) spec.total_gpus = parse_int_axis("256..1024", "--gpus");
  if (given("dp")) spec.dp = parse_int_axis(text("dp"), "--dp");
  LUMOS_EXPECT(!(given("gpus") && given("dp")),
               "lumos sweep: give --gpus (dp follows) or --dp, not both");
  spec.tp = parse_int_axis(text("tp"), "--tp");
  spec.cp = parse_int_axis(text("cp"), "--cp");
  spec.pp = parse_int_axis(text("pp"), "--pp");
  spec.interleave = parse_int_axis(text("interleave"), "--interleave");
  spec.mbs = parse_int_axis(text("mbs"), "--mbs");
  spec.gbs = parse_int_axis(text("gbs"), "--gbs");
  spec.recompute.clear();
  for (const auto& r : parse_name_axis(text("recompute"), "--recompute"))
    spec.recompute.push_back(model::parse_recompute(r));
  spec.sequence_parallel = parse_switch_axis(text("sp"), "--sp");
  spec.distributed_optimizer = parse_switch_axis(text("dist-opt"), "--dist-opt");
  if (given("stack")) spec.stacks = parse_name_axis(text("stack"), "--stack");
  spec.dtypes.clear();
  for (const std::string& d : parse_name_axis(text("dtype"), "--dtype")) {
    const cost::Dtype dtype = cost::parse_dtype(d);
    LUMOS_EXPECT(
        dtype == cost::Dtype::kBf16 || dtype == cost::Dtype::kFp16 || dtype == cost::Dtype::kFp8,
        "--dtype " + d + ": expected bf16, fp16 or fp8");
    spec.dtypes.push_back(dtype);
  }
  spec.fsdp.clear();
  for (int f : parse_switch_axis(text("fsdp"), "--fsdp")) {
    LUMOS_EXPECT(f >= 0, "--fsdp: expected on or off");
    spec.fsdp.push_back(f);
  }
  spec.gpus = parse_name_axis(text("gpu"), "--gpu");
  if (given("topology")) spec.topologies = parse_name_axis(text("topology"), "--topology");
  if (given("speed")) spec.speed = whatif::parse_speed_axes(text("speed"), "--speed");
  if (given("nic-bandwidth"))
    spec.nic_gbps = sweep::parse_bandwidth_axis(text("nic-bandwidth"), "--nic-bandwidth");
  spec.regions = parse_name_axis(text("region"), "--region");
  if (given("pue")) {
    spec.pue.clear();
    for (const std::string& item : parse_name_axis(text("pue"), "--pue")) {
      const double v = parse_finite(item).value_or(0);
      LUMOS_EXPECT(v >= 1 && v <= 5, "--pue " + item + ": expected a number in [1, 5]");
      spec.pue.push_back(v);
    }
  }
  if (given("gpus-per-node"))
    spec.gpus_per_node = sweep::parse_int_axis(text("gpus-per-node"), "--gpus-per-node");
  if (given("nvlink-bandwidth"))
    spec.nvlink_gbps = sweep::parse_bandwidth_axis(text("nvlink-bandwidth"), "--nvlink-bandwidth");
  // A trace-driven sweep: the traced job's configuration is the default of every axis not given,
  // and every configuration's kernels take the trace's calibration (as `lumos whatif` edits do).
  std::optional<graph::LoadedInput> input;
  std::optional<estimate::CalibratedTrace> traced;
  if (given("trace")) {
    LUMOS_EXPECT(a.count("model") || a.count("model-file") || file.model,
                 "lumos sweep --trace: give the traced model's dimensions (--model PRESET or "
                 "--model-file FILE); its layer count comes from the trace");
    input = graph::load_job(text("trace"));
    estimate::StructuralRequest q;
    q.model = spec.model;
    if (given("stack")) {
      LUMOS_EXPECT(spec.stacks.size() == 1,
                   "lumos sweep --trace: --stack names the traced job's stack (one)");
      q.stack = spec.stacks.front();
    }
    traced = estimate::calibrate_trace(*input, q, db);
    const model::ParallelConfig& c = traced->traced.cfg;
    spec.model = traced->traced.model;
    spec.stacks = {c.stack};
    auto keep = [&](const char* k, std::vector<int64_t>* axis, int64_t v) {
      if (!given(k)) *axis = {v};
    };
    keep("tp", &spec.tp, c.tp), keep("cp", &spec.cp, c.cp), keep("pp", &spec.pp, c.pp);
    keep("interleave", &spec.interleave, c.interleave), keep("mbs", &spec.mbs, c.mbs);
    keep("gbs", &spec.gbs, c.gbs);
    if (!given("gpus") && !given("dp")) spec.total_gpus.clear(), spec.dp = {c.dp};
    if (!given("recompute")) spec.recompute = {c.recompute};
    if (!given("sp")) spec.sequence_parallel = {c.sequence_parallel ? 1 : 0};
    if (!given("dist-opt")) spec.distributed_optimizer = {c.distributed_optimizer ? 1 : 0};
    if (!given("fsdp")) spec.fsdp = {c.fsdp ? 1 : 0};
    if (!given("dtype")) spec.dtypes = {c.dtype};
    if (!given("gpu")) spec.gpus = {traced->request.gpu};
    spec.adjust_costs = [&](model::StepCosts& k) { traced->calibrate(k, db); };
  }
  spec.tokens_to_train = a["tokens"].as<double>();
  if (!a.count("tokens") && file.options.count("tokens")) {
    size_t used = 0;
    const std::string& t = file.options.at("tokens");
    try {
      spec.tokens_to_train = std::stod(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    LUMOS_EXPECT(used == t.size() && !t.empty(),
                 a["spec"].as<std::string>() + ": tokens: '" + t + "' is not a number");
  }
  LUMOS_EXPECT(spec.tokens_to_train > 0 && spec.tokens_to_train < 1e18,
               "--tokens: expected a positive number of tokens below 1e18");
  const std::vector<std::string> objectives = parse_objectives(text("objectives"));
  const int top = a["top"].as<int>();
  LUMOS_EXPECT(top >= 0, "--top: expected a count >= 0");
  sweep::SweepOptions opt;
  if (a.count("shard")) std::tie(opt.shard, opt.shards) = parse_shard(a["shard"].as<std::string>());
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
  Progress progress;
  opt.progress = [&](uint64_t done, uint64_t total) { progress(done, total); };
  keep_freed_graph_memory();
  const sweep::SweepResult r = sweep::run_sweep(spec, db, opt);
  std::stringstream csv;
  report::sweep_csv(csv, r);
  // The front is computed on the CSV as written, the same code as `lumos pareto`.
  report::CsvTable table = report::parse_csv(csv, "over " + text("objectives"));
  sweep::SweepStats stats = r.stats;
  if (world.size() > 1) {
    const std::vector<std::string> parts = world.gather(stats_line(r.stats) + "\n" + csv.str());
    if (world.rank() > 0) return 0;
    table.rows.clear();
    stats = {};
    std::vector<std::pair<uint64_t, std::vector<std::string>>> rows;
    for (const std::string& part : parts) {
      const size_t eol = part.find('\n');
      stats = add_stats(stats, part.substr(0, eol));
      std::istringstream in(part.substr(eol + 1));
      report::CsvTable t = report::parse_csv(in, table.source);
      const size_t index = t.column("index");
      for (auto& row : t.rows) rows.emplace_back(std::stoull(row[index]), std::move(row));
    }
    std::sort(rows.begin(), rows.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& row : rows) table.rows.push_back(std::move(row.second));
  }
  std::vector<size_t> all(table.rows.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<size_t> front = report::pareto_rows(table, objectives);
  if (a.count("output"))
    write_output(a["output"].as<std::string>(),
                 [&](std::ostream& os) { report::write_csv(os, table, all); });
  if (a.count("pareto"))
    write_output(a["pareto"].as<std::string>(),
                 [&](std::ostream& os) { report::write_csv(os, table, front); });
  // A CSV on standard output keeps it to itself: the report goes to standard error.
  const bool csv_to_stdout = (a.count("output") && is_stdout(a["output"].as<std::string>())) ||
                             (a.count("pareto") && is_stdout(a["pareto"].as<std::string>()));
  std::ostream& out = csv_to_stdout ? std::cerr : std::cout;
  print_top(out, stats, table, front, top);
  out << strprintf(
      "time: %.2f s wall (%.0f configurations/s); summed over threads%s: graphs %.2f s, pricing "
      "%.2f s, replay %.2f s, waiting for memory %.2f s\n",
      stats.total_s, stats.total_s > 0 ? stats.rows / stats.total_s : 0.0,
      world.size() > 1 ? strprintf(" and %d ranks", world.size()).c_str() : "", stats.build_s,
      stats.price_s, stats.replay_s, stats.wait_s);
  for (const char* k : {"output", "pareto"})
    if (a.count(k) && !is_stdout(a[k].as<std::string>()))
      out << "  wrote " << a[k].as<std::string>() << '\n';
  return 0;
}

int cmd_pareto(int argc, char** argv) {
  cxxopts::Options o("lumos pareto",
                     "The Pareto front of variants CSVs (e.g. a sweep's shards), or the CSVs "
                     "merged.");
  o.add_options()("objectives", "2 or 3 columns, minimised ('-' prefix: maximised)",
                  cxxopts::value<std::string>()->default_value(kDefaultObjectives))(
      "merge", "join the inputs' rows (in `index` order) without taking a front")(
      "o,output", "output CSV ('-': standard output)",
      cxxopts::value<std::string>()->default_value("-"))(
      "inputs", "variants CSVs", cxxopts::value<std::vector<std::string>>())("h,help",
                                                                             "show this help");
  o.parse_positional({"inputs"});
  o.positional_help("IN.csv [IN2.csv ...]");
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  LUMOS_EXPECT(a.count("inputs"), "lumos pareto: give one or more variants CSVs");
  const std::string out = a["output"].as<std::string>();
  if (!is_stdout(out)) check_output_path(out);
  report::CsvTable all;
  for (const std::string& path : a["inputs"].as<std::vector<std::string>>()) {
    report::CsvTable t = report::read_csv(path);
    if (all.header.empty()) {
      all = std::move(t);
      continue;
    }
    LUMOS_EXPECT(t.header == all.header, path + ": its columns differ from " + all.source +
                                             "'s; expected the same CSV kind");
    for (auto& row : t.rows) all.rows.push_back(std::move(row));
  }
  std::vector<size_t> rows(all.rows.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  // Shards' rows back in the sweep's order.
  bool has_index = std::find(all.header.begin(), all.header.end(), "index") != all.header.end();
  if (has_index) {
    const size_t col = all.column("index");
    std::vector<int64_t> key(all.rows.size());
    for (size_t i = 0; i < all.rows.size(); ++i)
      key[i] = static_cast<int64_t>(parse_count(
          all.rows[i][col], all.source + ":" + std::to_string(i + 2) + ": column 'index'"));
    std::stable_sort(rows.begin(), rows.end(), [&](size_t x, size_t y) { return key[x] < key[y]; });
    for (size_t i = 1; i < rows.size(); ++i)
      LUMOS_EXPECT(key[rows[i]] != key[rows[i - 1]],
                   "lumos pareto: configuration " + std::to_string(key[rows[i]]) +
                       " is in the inputs twice (the same shard given twice?)");
  }
  report::CsvTable sorted = all;
  for (size_t i = 0; i < rows.size(); ++i) sorted.rows[i] = all.rows[rows[i]];
  std::vector<size_t> keep;
  if (a.count("merge")) {
    keep.resize(sorted.rows.size());
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = i;
  } else {
    keep = report::pareto_rows(sorted, parse_objectives(a["objectives"].as<std::string>()));
  }
  write_output(out, [&](std::ostream& os) { report::write_csv(os, sorted, keep); });
  if (!is_stdout(out))
    std::cout << "wrote " << keep.size() << " of " << sorted.rows.size() << " rows to " << out
              << '\n';
  return 0;
}

}  // namespace lumos::cli
