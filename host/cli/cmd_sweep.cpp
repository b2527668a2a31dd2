// lumos sweep: many configurations of one model through the batch engine, the variants and their
// Pareto front to CSV. The options are sweep_options.hpp's, the work sweep/'s, the CSVs and the
// report report/'s.
#include <cxxopts.hpp>

#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/help_text.hpp"
#include "cli/mpi_world.hpp"
#include "cli/quiet_option.hpp"
#include "cli/sweep_options.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/csv_table.hpp"
#include "common/heap_tuning.hpp"
#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "report/sweep_csv.hpp"
#include "report/sweep_headroom.hpp"
#include "report/sweep_report.hpp"
#include "sweep/pareto_csv.hpp"
#include "sweep/shard_header.hpp"
#include "sweep/shard_merge.hpp"
#include "sweep/sweep_run.hpp"

namespace lumos::cli {
namespace {

// The sweep's rows, held until the process ends and given back with it, not freed one by one:
// the command ends once its outputs are written, and freeing the rows (a few blocks each, in the
// heaps of the threads that priced them) took milliseconds more (docs/design.md, "Sweeps").
// Reachable from here, so a leak checker counts them as held, not lost.
const sweep::SweepResult& kept_until_exit(sweep::SweepResult r) {
  static auto* const kept = new std::vector<std::unique_ptr<const sweep::SweepResult>>;
  kept->push_back(std::make_unique<const sweep::SweepResult>(std::move(r)));
  return *kept->back();
}

int run_sweep_command(int argc, char** argv, const MpiWorld& world) {
  cxxopts::Options o("lumos sweep",
                     "Many configurations of a model through the batch engine; variants and their "
                     "Pareto front to CSV. At most 10,000,000 configurations, counted from the "
                     "axes before any is expanded.");
  sweep_options(o);
  add_quiet_option(o);
  const auto a = parse_options(o, argc, argv);
  if (a.count("help"))
    return std::cout << help_with_examples(
                            o, {"lumos sweep -o sweep.csv --pareto pareto.csv  # the default grid",
                                "lumos sweep --model llama3-70b --gpus 512..1024 --gpu h100,b200 "
                                "--top 10",
                                "lumos sweep --spec sweep.toml --shard 0/4 -o shard0.csv",
                                "lumos sweep --min-headroom 10% --json  # layouts with room"})
                     << '\n',
           0;
  refuse_unexpected_args(a, "lumos sweep",
                         "a sweep file goes with --spec: lumos sweep --spec " +
                             (a.unmatched().empty() ? std::string() : a.unmatched()[0]));
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  SweepRequest q = sweep_request(a, db, world);
  Progress progress("configurations", quiet(a));
  q.opt.progress = progress.fn();
  keep_freed_graph_memory();
  const sweep::SweepResult& r = kept_until_exit(sweep::run_sweep(q.spec, db, q.opt));
  // The front is taken over the cells as the variants CSV holds them, as `lumos pareto` does.
  const std::string source = "over " + q.objectives;
  report::SweepReport rep{
      r.stats,     nullptr, {}, q.top, world.size(), {}, nullptr, nullptr, q.min_headroom_fraction,
      q.objectives};
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
  table = report::with_min_headroom(table, q.min_headroom_fraction);
  rep.table = &table;
  rep.db = &db, rep.model = &q.spec.model;
  rep.front = sweep::pareto_rows(table, sweep::parse_objectives(q.objectives));
  std::vector<size_t> all(table.rows);
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  bool csv_to_stdout = false;
  for (const char* k : {"output", "pareto"}) {
    if (!a.count(k)) continue;
    const std::string path = a[k].as<std::string>();
    const std::vector<size_t>& rows = k[0] == 'o' ? all : rep.front;
    // A shard's CSVs say which sweep and shard they are, for `lumos pareto` to check the set.
    sweep::ShardHeader h{LUMOS_VERSION,    sweep::sweep_fingerprint(q.description),
                         r.stats.variants, q.opt.shard,
                         q.opt.shards,     rows.size(),
                         k[0] == 'p'};
    write_output(path, [&](std::ostream& os) {
      if (a.count("shard")) os << sweep::shard_header_line(h) << '\n';
      report::write_csv(os, table, rows);
    });
    // A CSV on standard output keeps it to itself: the report goes to standard error.
    if (is_stdout(path)) csv_to_stdout = true;
    if (!is_stdout(path)) rep.wrote.push_back(path);
  }
  if (q.json) return report::sweep_json(std::cout, rep), 0;
  report::print_sweep(csv_to_stdout ? std::cerr : std::cout, rep);
  return 0;
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  // Under mpirun each rank runs one shard; rank 0 gathers the rows and writes everything.
  const MpiWorld world;
  return run_on_ranks(world, [&] { return run_sweep_command(argc, argv, world); });
}

}  // namespace lumos::cli
