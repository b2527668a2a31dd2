// The Pareto front of a variants CSV: no front row is dominated by a feasible row, every
// non-dominated feasible row is on it (random tables, by brute force), and bad tables fail in one
// line naming the file.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "report/sweep_csv.hpp"
#include "sweep/pareto_csv.hpp"
#include "sweep/sweep_run.hpp"

namespace {

using lumos::csv_view;
using lumos::CsvTable;
using lumos::sweep::pareto_rows;

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool better = false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k] > b[k]) return false;
    better = better || a[k] < b[k];
  }
  return better;
}

TEST(ParetoCsv, FrontIsExactlyTheNonDominatedFeasibleRows) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int objectives = 2 + trial % 2;
    const int n = 1 + static_cast<int>(rng() % 60);
    std::ostringstream csv;
    csv << "index,feasible,a,b,c\n";
    std::vector<std::vector<double>> v(static_cast<size_t>(n));
    std::vector<bool> ok(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      ok[static_cast<size_t>(i)] = rng() % 5 != 0;
      // Few distinct values, so that ties and duplicates happen.
      for (int k = 0; k < 3; ++k)
        v[static_cast<size_t>(i)].push_back(static_cast<double>(rng() % 6));
      csv << i << ',' << (ok[static_cast<size_t>(i)] ? 1 : 0) << ',' << v[static_cast<size_t>(i)][0]
          << ',' << v[static_cast<size_t>(i)][1] << ',' << -v[static_cast<size_t>(i)][2] << '\n';
    }
    std::istringstream in(csv.str());
    const CsvTable t = lumos::parse_csv(in, "random.csv");
    // c holds the negated third objective: "-c" maximises it, i.e. minimises the objective.
    std::vector<std::string> names = {"a", "b"};
    if (objectives == 3) names.push_back("-c");
    const std::vector<size_t> front = pareto_rows(csv_view(t), names);
    std::vector<bool> on(static_cast<size_t>(n), false);
    for (size_t r : front) on[r] = true;
    for (int i = 0; i < n; ++i) {
      auto obj = [&](int r) {
        return std::vector<double>(v[static_cast<size_t>(r)].begin(),
                                   v[static_cast<size_t>(r)].begin() + objectives);
      };
      bool dominated = false;
      for (int j = 0; j < n; ++j)
        if (ok[static_cast<size_t>(j)] && dominates(obj(j), obj(i))) dominated = true;
      EXPECT_EQ(on[static_cast<size_t>(i)], ok[static_cast<size_t>(i)] && !dominated)
          << "trial " << trial << " row " << i;
    }
  }
}

TEST(ParetoCsv, BadTablesFailInOneLineNamingTheFile) {
  std::istringstream short_row("index,a,b\n0,1\n");
  try {
    lumos::parse_csv(short_row, "x.csv");
    FAIL();
  } catch (const lumos::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.csv:2"), std::string::npos) << e.what();
  }
  std::istringstream ok("index,a,b\n0,1,x\n");
  const CsvTable t = lumos::parse_csv(ok, "y.csv");
  EXPECT_THROW(pareto_rows(csv_view(t), {"a", "nope"}), lumos::InputError);
  EXPECT_THROW(pareto_rows(csv_view(t), {"a", "b"}), lumos::InputError);  // "x"
  EXPECT_THROW(pareto_rows(csv_view(t), {"a"}), lumos::InputError);
}

// A feasible flag is 0 or 1 as the sweep writes it: a 2 (or "yes") was read as infeasible and
// its row silently left off the front.
TEST(ParetoCsv, AFeasibleFlagOtherThanZeroOrOneIsRefusedWithItsLine) {
  std::istringstream in("index,feasible,a,b\n0,1,1,2\n1,2,2,1\n");
  const CsvTable t = lumos::parse_csv(in, "v.csv");
  try {
    pareto_rows(csv_view(t), {"a", "b"});
    FAIL();
  } catch (const lumos::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("v.csv:3: column 'feasible': expected 0 or 1, got '2'"),
              std::string::npos)
        << e.what();
  }
  std::istringstream good("index,feasible,a,b\n0,1,1,2\n1,0,0,0\n");
  const CsvTable g = lumos::parse_csv(good, "w.csv");
  EXPECT_EQ(pareto_rows(csv_view(g), {"a", "b"}).size(), 1u);
}

// A sweep's front taken over its rows (the cells formatted as the CSV holds them) is the front of
// its CSV written and read back, for any columns, and fails the same way on a text column.
TEST(ParetoCsv, TheFrontOfASweepsRowsIsTheFrontOfItsCsv) {
  lumos::sweep::SweepSpec spec;
  spec.model = lumos::model::preset("gpt3-15b");
  spec.model.layers = 4;
  spec.total_gpus = {8, 16, 32};
  spec.tp = {1, 2, 4};
  spec.pp = {1, 2};
  spec.gbs = {32, 64};
  spec.gpus = {"h100", "a100", "h200"};
  const lumos::sweep::SweepResult r = lumos::sweep::run_sweep(spec, lumos::cost::embedded_db(), {});
  std::ostringstream os;
  lumos::report::sweep_csv(os, r);
  std::istringstream in(os.str());
  const CsvTable t = lumos::parse_csv(in, "over");
  const lumos::CsvView rows = lumos::report::sweep_view(r, "over");
  for (const std::vector<std::string>& names :
       std::vector<std::vector<std::string>>{{"time_to_train_h", "gpu_hours", "operational_kg"},
                                             {"gpus", "-mfu", "tp"},
                                             {"pue", "nic_gbps", "-index"},
                                             {"step_time_s", "-tokens_per_s"},
                                             {"memory_gib", "energy_kwh", "sci_kg"}}) {
    const std::vector<size_t> front = pareto_rows(rows, names);
    EXPECT_FALSE(front.empty()) << names[0];
    EXPECT_EQ(front, pareto_rows(csv_view(t), names)) << names[0];
  }
  auto error_of = [](const lumos::CsvView& v) -> std::string {
    try {
      pareto_rows(v, {"gpu", "tp"});
    } catch (const lumos::InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(rows), "over:2: column 'gpu': 'h100' is not a number");
  EXPECT_EQ(error_of(rows), error_of(csv_view(t)));
}

}  // namespace
