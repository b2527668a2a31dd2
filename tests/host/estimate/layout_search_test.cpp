// `lumos estimate --search`: enumerated layouts are valid, fit in memory, and come fastest first;
// the search's options are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cost/kernels_db.hpp"
#include "estimate/layout_search.hpp"
#include "support/test_util.hpp"

using namespace lumos::model;
using namespace lumos::estimate;
using lumos::testing::run_lumos;
using lumos::testing::TempDir;

namespace {

SearchRequest small_search() {
  SearchRequest q;
  q.base.model = preset("llama3-8b");
  q.base.model.layers = 4;
  q.base.cfg.gbs = 16;
  q.gpus = 8;
  return q;
}

}  // namespace

TEST(LayoutSearch, RanksLayoutsThatFitFastestFirst) {
  const SearchRequest q = small_search();
  const SearchResult r = search_layouts(q, lumos::cost::embedded_db());
  ASSERT_FALSE(r.rows.empty());
  EXPECT_EQ(r.candidates, r.invalid + r.too_big + r.too_large + r.rows.size());
  EXPECT_EQ(r.stack, lumos::cost::embedded_db().default_stack);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    EXPECT_EQ(row.cfg.gpus(), 8);
    EXPECT_LE(row.memory_bytes, 80.0 * 1024 * 1024 * 1024);
    EXPECT_NO_THROW(check_layout(q.base.model, row.cfg));
    if (i > 0) EXPECT_GE(r.rows[i - 1].tokens_per_s, row.tokens_per_s);
  }
}

// The search is a sweep: each ranked row is what `lumos estimate` gives for its layout, and the
// rows estimated in full carry that estimate's breakdown.
TEST(LayoutSearch, RowsEqualIndividualEstimates) {
  SearchRequest q = small_search();
  q.base.gpu = "a100";
  q.detailed = 4;
  const auto& db = lumos::cost::embedded_db();
  const SearchResult r = search_layouts(q, db);
  ASSERT_GT(r.rows.size(), q.detailed);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SearchRow& row = r.rows[i];
    EstimateRequest one = q.base;
    one.cfg = row.cfg;
    const Estimate e = run_estimate(one, db).estimate;
    SCOPED_TRACE(::testing::Message()
                 << "row " << i << ": TP" << row.cfg.tp << " CP" << row.cfg.cp << " PP"
                 << row.cfg.pp << " mbs" << row.cfg.mbs << " v" << row.cfg.interleave);
    EXPECT_NEAR(row.step_time_us, e.step_time_us, 1e-6 * e.step_time_us);
    EXPECT_NEAR(row.tokens_per_s, e.tokens_per_s, 1e-6 * e.tokens_per_s);
    EXPECT_NEAR(row.mfu, e.mfu, 1e-6 * e.mfu);
    EXPECT_NEAR(row.model_tflops_per_gpu, e.model_tflops_per_gpu, 1e-6 * e.model_tflops_per_gpu);
    EXPECT_DOUBLE_EQ(row.memory_bytes,
                     e.stages[static_cast<size_t>(e.worst_memory_stage)].memory.total_bytes());
    EXPECT_EQ(row.step_range.known, e.step_range.known);
    EXPECT_NEAR(row.step_range.low_us, e.step_range.low_us, 1e-6 * e.step_time_us);
    EXPECT_NEAR(row.step_range.high_us, e.step_range.high_us, 1e-6 * e.step_time_us);
    EXPECT_EQ(row.detailed, i < q.detailed);
    if (row.detailed) {
      EXPECT_DOUBLE_EQ(row.breakdown.bubble_us, e.breakdown.bubble_us);
      EXPECT_DOUBLE_EQ(row.breakdown.exposed_comm_us, e.breakdown.exposed_comm_us);
      EXPECT_DOUBLE_EQ(row.breakdown.exposed_compute_us, e.breakdown.exposed_compute_us);
    }
  }
}

// The memory budget bounds the graphs built at once: a layout whose ranking graph alone needs
// more counts as too large, the others rank the same, and a top layout whose whole graph alone
// needs more is shown without its breakdown.
TEST(LayoutSearch, ATightMemoryBudgetDropsLargeGraphsAndRanksTheRestTheSame) {
  SearchRequest q = small_search();
  q.detailed = 1000;
  q.memory_budget_bytes = 4.0 * 1024 * 1024 * 1024;
  const SearchResult roomy = search_layouts(q, lumos::cost::embedded_db());
  q.memory_budget_bytes = 256 * 1024;  // 1,024 nodes at kEstimateBytesPerNode
  const SearchResult tight = search_layouts(q, lumos::cost::embedded_db());
  EXPECT_GT(tight.too_large, roomy.too_large);
  EXPECT_EQ(tight.too_large + tight.rows.size(), roomy.too_large + roomy.rows.size());
  ASSERT_FALSE(tight.rows.empty());
  size_t tight_detailed = 0;
  for (const SearchRow& t : tight.rows) {
    const auto same = std::find_if(roomy.rows.begin(), roomy.rows.end(), [&](const SearchRow& r) {
      return r.cfg.tp == t.cfg.tp && r.cfg.cp == t.cfg.cp && r.cfg.pp == t.cfg.pp &&
             r.cfg.mbs == t.cfg.mbs && r.cfg.interleave == t.cfg.interleave &&
             r.cfg.recompute == t.cfg.recompute &&
             r.cfg.split_counts_embedding == t.cfg.split_counts_embedding;
    });
    ASSERT_NE(same, roomy.rows.end());
    EXPECT_EQ(same->step_time_us, t.step_time_us);
    EXPECT_TRUE(same->detailed);
    tight_detailed += t.detailed;
  }
  EXPECT_LT(tight_detailed, tight.rows.size());
  EXPECT_EQ(run_lumos("estimate --search-memory 1GiB").exit_code, 1);
}

TEST(LayoutSearch, CliWritesCsvAndRejectsSearchedOptions) {
  TempDir tmp;
  const auto r =
      run_lumos("estimate --search --model llama3-8b --layers 4 --gbs 16 --gpus 8 --top 3 --csv " +
                tmp.file("s.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("rank"), std::string::npos) << r.out;
  std::ifstream in(tmp.file("s.csv"));
  std::string header, line;
  std::getline(in, header);
  // The sweep's columns (one schema for both), read by name.
  std::vector<std::string> names;
  std::stringstream hs(header);
  for (std::string c; std::getline(hs, c, ',');) names.push_back(c);
  auto column = [&](const std::string& n) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), n) - names.begin());
  };
  const size_t step = column("step_time_s"), low = column("step_time_low_s"),
               high = column("step_time_high_s"), comm = column("exposed_comm_fraction");
  ASSERT_LT(std::max({step, low, high, comm}), names.size()) << header;
  size_t rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    // H100 under the default stack: the range comes from the published H100 runs, so both ends
    // are numbers, the low end no later than the estimate.
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (cells.size() < names.size()) cells.resize(names.size());  // empty trailing cells
    ASSERT_EQ(cells.size(), names.size()) << line;
    EXPECT_LE(std::stod(cells[low]), std::stod(cells[step])) << line;
    EXPECT_GE(std::stod(cells[high]), std::stod(cells[step])) << line;
    // The breakdown's columns are filled for the --top rows, estimated in full.
    EXPECT_EQ(rows <= 3, !cells[comm].empty()) << line;
  }
  EXPECT_GT(rows, 3u);
  for (const char* bad : {"estimate --search --gbs 16", "estimate --search --gpus 8 --tp 2",
                          "estimate --gpus 8", "estimate --search --gpus 0", "estimate --top 3",
                          "estimate --search --gpus 8 --gpu a100 --dtype fp8",
                          "estimate --search --gpus 8 --csv /nonexistent/dir/s.csv"}) {
    const auto b = run_lumos(bad);
    EXPECT_EQ(b.exit_code, 1) << bad << "\n" << b.out;
    EXPECT_EQ(std::count(b.out.begin(), b.out.end(), '\n'), 1) << bad << "\n" << b.out;
  }
}
