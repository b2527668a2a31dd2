// lumos pareto: a front recomputed from variants CSVs, or shards' CSVs merged.
#include <cxxopts.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/help_text.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "common/path_identity.hpp"
#include "report/sweep_csv.hpp"
#include "sweep/pareto_csv.hpp"
#include "sweep/shard_header.hpp"
#include "sweep/shard_merge.hpp"

namespace lumos::cli {

int cmd_pareto(int argc, char** argv) {
  cxxopts::Options o("lumos pareto",
                     "The Pareto front of variants CSVs (e.g. a sweep's shards), or the CSVs "
                     "merged. Shards' CSVs (sweep --shard, with their #lumos-sweep line) must be "
                     "every shard of one sweep, once each; --merge takes their variants, not "
                     "their fronts.");
  o.add_options()("objectives", "2 or 3 columns, minimised ('-' prefix: maximised)",
                  cxxopts::value<std::string>()->default_value(sweep::kDefaultObjectives))(
      "merge", "join the inputs' rows (in `index` order) without taking a front")(
      "o,output", "output CSV ('-': standard output)",
      cxxopts::value<std::string>()->default_value("-"))(
      "inputs", "variants CSVs", cxxopts::value<std::vector<std::string>>())("h,help",
                                                                             "show this help");
  o.parse_positional({"inputs"});
  o.positional_help("IN.csv [IN2.csv ...]");
  const auto a = parse_options(o, argc, argv);
  if (a.count("help"))
    return std::cout << help_with_examples(
                            o,
                            {"lumos pareto sweep.csv -o front.csv",
                             "lumos pareto --merge shard-*.csv -o all.csv  # shards' rows joined"})
                     << '\n',
           0;
  refuse_unexpected_args(a, "lumos pareto");
  LUMOS_EXPECT(a.count("inputs"), "lumos pareto: give one or more variants CSVs");
  const std::string out = a["output"].as<std::string>();
  std::vector<common::RolePath> inputs;
  for (const std::string& path : a["inputs"].as<std::vector<std::string>>())
    inputs.push_back({path, "the input CSV"});
  common::check_outputs_distinct("lumos pareto", inputs, {{out, "-o"}});
  if (!is_stdout(out)) check_output_path(out);
  std::vector<CsvTable> parts;
  std::vector<sweep::ShardInput> shards;
  for (const std::string& path : a["inputs"].as<std::vector<std::string>>()) {
    parts.push_back(read_csv(path));
    shards.push_back(
        {path, sweep::find_shard_header(parts.back().comments, path), parts.back().rows.size()});
  }
  // Shards' CSVs (sweep --shard) must make one whole sweep: no gap, no shard twice, one sweep.
  sweep::check_shard_set(shards, a.count("merge") > 0);
  const CsvTable merged = sweep::merge_shards(std::move(parts));
  const CsvView table = csv_view(merged);
  std::vector<size_t> keep;
  if (a.count("merge")) {
    keep.resize(table.rows);
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = i;
  } else {
    keep = sweep::pareto_rows(table, sweep::parse_objectives(a["objectives"].as<std::string>()));
  }
  write_output(out, [&](std::ostream& os) { report::write_csv(os, table, keep); });
  if (!is_stdout(out))
    std::cout << "wrote " << keep.size() << " of " << table.rows << " rows to " << out << '\n';
  return 0;
}

}  // namespace lumos::cli
