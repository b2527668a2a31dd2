#include "cli/estimate_search.hpp"

#include <algorithm>
#include <iostream>
#include <string>

#include "cli/headroom_option.hpp"
#include "cli/layout_options.hpp"
#include "cli/path_options.hpp"
#include "cli/quiet_option.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/heap_tuning.hpp"
#include "common/progress.hpp"
#include "cost/size_units.hpp"
#include "estimate/layout_search.hpp"
#include "report/search_report.hpp"

namespace lumos::cli {

using namespace lumos::estimate;

int run_estimate_search(const cxxopts::ParseResult& a, const cost::KernelsDb& db) {
  if (!a.count("gpus")) throw InputError("lumos estimate --search: --gpus N is required");
  for (const char* k : {"tp", "pp", "dp", "cp", "mbs", "interleave", "recompute", "sp", "dist-opt",
                        "split-embedding"})
    if (a.count(k))
      throw InputError(std::string("lumos estimate --search: --") + k +
                       " is searched; leave it out");
  if (a.count("csv")) {  // before the search: a bad path should not cost its minutes
    LUMOS_EXPECT(!is_stdout(a["csv"].as<std::string>()) || !a.count("json"),
                 "lumos estimate: --csv - and --json both write to standard output");
    if (!is_stdout(a["csv"].as<std::string>())) check_output_path(a["csv"].as<std::string>());
  }
  SearchRequest q;
  q.base = request_from(a);
  q.gpus = count_of(a, kGpus);
  q.memory_budget_bytes =
      cost::parse_bytes(a["search-memory"].as<std::string>(), "--search-memory");
  LUMOS_EXPECT(q.memory_budget_bytes >= 64.0 * 1024 * 1024,
               "lumos estimate --search: --search-memory must be at least 64MiB");
  q.min_headroom_fraction = min_headroom_of(a, "lumos estimate --search");
  const int top = static_cast<int>(count_of(a, kTop, "lumos estimate --search: "));
  q.detailed = static_cast<size_t>(top);
  Progress ranked("layouts ranked", quiet(a)), detailed("layouts estimated in full", quiet(a));
  q.rank_progress = ranked.fn();
  q.detail_progress = detailed.fn();
  keep_freed_graph_memory();
  const SearchResult r = search_layouts(q, db);
  if (a.count("csv")) {
    write_output(a["csv"].as<std::string>(),
                 [&](std::ostream& os) { report::search_csv(os, q, r); });
    if (is_stdout(a["csv"].as<std::string>())) return 0;  // the table is the output
  }
  const size_t shown = std::min(r.rows.size(), static_cast<size_t>(top));
  if (a.count("json")) {
    report::search_json(std::cout, q, r, shown);
    return 0;
  }
  report::search_text(std::cout, q, r, shown);
  if (a.count("csv")) std::cout << "  wrote " << a["csv"].as<std::string>() << '\n';
  return 0;
}

}  // namespace lumos::cli
