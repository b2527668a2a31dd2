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

TEST(LayoutSearch, RanksLayoutsThatFitFastestFirst) {
  SearchRequest q;
  q.base.model = preset("llama3-8b");
  q.base.model.layers = 4;
  q.base.cfg.gbs = 16;
  q.gpus = 8;
  const SearchResult r = search_layouts(q, lumos::cost::embedded_db());
  ASSERT_FALSE(r.rows.empty());
  EXPECT_EQ(r.candidates, r.invalid + r.too_big + r.too_large + r.rows.size());
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    EXPECT_EQ(row.cfg.gpus(), 8);
    EXPECT_TRUE(row.estimate.fits);
    EXPECT_NO_THROW(check_layout(q.base.model, row.cfg));
    if (i > 0) EXPECT_GE(r.rows[i - 1].estimate.tokens_per_s, row.estimate.tokens_per_s);
  }
}

// Graphs are built within the memory budget: a layout whose graph alone needs more is counted as
// too large, and a budget that holds them all changes nothing else.
TEST(LayoutSearch, LayoutsAboveTheMemoryBudgetCountAsTooLarge) {
  SearchRequest q;
  q.base.model = preset("llama3-8b");
  q.base.model.layers = 4;
  q.base.cfg.gbs = 16;
  q.gpus = 8;
  q.memory_budget_bytes = 1024 * 1024;  // 4,096 nodes at kEstimateBytesPerNode
  const SearchResult tight = search_layouts(q, lumos::cost::embedded_db());
  q.memory_budget_bytes = 4.0 * 1024 * 1024 * 1024;
  const SearchResult roomy = search_layouts(q, lumos::cost::embedded_db());
  EXPECT_GT(tight.too_large, roomy.too_large);
  EXPECT_EQ(tight.candidates, tight.invalid + tight.too_big + tight.too_large + tight.rows.size());
  EXPECT_EQ(tight.too_large + tight.rows.size(), roomy.too_large + roomy.rows.size());
  for (const auto& row : tight.rows) EXPECT_LE(row.estimate.nodes * kEstimateBytesPerNode, 1 << 20);
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
  EXPECT_EQ(header.rfind("rank,tp,cp,pp,dp", 0), 0u) << header;
  EXPECT_NE(header.find(",step_time_s,step_time_low_s,step_time_high_s,"), std::string::npos)
      << header;
  size_t rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    // H100 under the default stack: the range comes from the published H100 runs, so both ends
    // are numbers, the low end no later than the estimate.
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    ASSERT_GE(cells.size(), 15u) << line;
    EXPECT_LE(std::stod(cells[13]), std::stod(cells[12])) << line;
    EXPECT_GE(std::stod(cells[14]), std::stod(cells[12])) << line;
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
