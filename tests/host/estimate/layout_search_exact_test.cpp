// A layout search ranks on folded graphs (layers and steady-state micro-batches folded), each
// counted and built once: every step time it ranks by equals `lumos estimate`'s whole graph of
// that layout to 1e-9, and so does its ranking, over 1F1B, interleaved 1F1B, recomputation,
// context and data parallelism, with enough micro-batches that the steady state folds.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cost/kernels_db.hpp"
#include "estimate/layout_search.hpp"

using namespace lumos::model;
using namespace lumos::estimate;

namespace {

SearchRequest folding_search() {
  SearchRequest q;
  q.base.model = preset("llama3-8b");
  q.base.model.layers = 8;
  q.base.cfg.gbs = 256;  // 16 to 256 micro-batches per pipeline: most steady states fold
  q.gpus = 16;
  q.max_tp = 2;
  q.max_pp = 4;
  q.max_interleave = 2;
  q.mbs = {1, 2};
  q.detailed = 0;
  return q;
}

}  // namespace

TEST(LayoutSearchExact, EveryStepTimeAndTheRankingEqualPerLayoutEstimates) {
  const SearchRequest q = folding_search();
  const auto& db = lumos::cost::embedded_db();
  const SearchResult r = search_layouts(q, db);
  ASSERT_GT(r.rows.size(), 20u);
  std::vector<double> alone(r.rows.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SearchRow& row = r.rows[i];
    EstimateRequest one = q.base;
    one.cfg = row.cfg;
    const Estimate e = run_estimate(one, db).estimate;  // the whole graph, nothing folded
    SCOPED_TRACE(::testing::Message()
                 << "row " << i << ": TP" << row.cfg.tp << " CP" << row.cfg.cp << " PP"
                 << row.cfg.pp << " DP" << row.cfg.dp << " mbs" << row.cfg.mbs << " v"
                 << row.cfg.interleave << " recompute " << to_string(row.cfg.recompute));
    EXPECT_NEAR(row.step_time_us, e.step_time_us, 1e-9 * e.step_time_us);
    alone[i] = e.tokens_per_s;
    const bool folds = folds_microbatches(row.cfg, e.layout.microbatches);
    if (row.cfg.pp > 1 && folds) seen.insert(row.cfg.interleave > 1 ? "interleaved" : "1f1b");
    if (row.cfg.recompute == Recompute::kFull && folds) seen.insert("recompute");
    if (row.cfg.cp > 1 && folds) seen.insert("cp");
    if (row.cfg.dp > 1 && row.cfg.pp > 1 && folds) seen.insert("dp");
  }
  // The layouts the search ranked exercise what the fold must keep exact.
  EXPECT_EQ(seen, (std::set<std::string>{"1f1b", "interleaved", "recompute", "cp", "dp"}));
  // The ranking: the per-layout estimates' throughputs come in the search's order (ties aside).
  for (size_t i = 1; i < alone.size(); ++i)
    EXPECT_GE(alone[i - 1], alone[i] * (1 - 1e-9)) << "rows " << i - 1 << " and " << i;
}
