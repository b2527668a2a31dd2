// The columns of dgxc-benchmarking's tables that published-runs.json leaves out: the fitted
// recipes at the other GPU counts (and the Llama 3.1 405B recipe's proxy layouts with 7, 21 and
// 42 layers), BF16 and FP8, none of them used to fit a constant. They check how the estimate
// carries from the fitted columns to the rest of the same table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "cost/kernels_db.hpp"
#include "estimate/calibration_check.hpp"
#include "estimate/published_runs.hpp"
#include "estimate/unfitted_columns.hpp"

using namespace lumos::estimate;

namespace {

const UnfittedCheck& check() {
  static const UnfittedCheck u = check_unfitted_columns(lumos::cost::embedded_db());
  return u;
}

bool is_405b(const CalibrationRow& r) {
  return r.run->label.find("405B") != std::string::npos;
}

}  // namespace

TEST(UnfittedColumns, EveryColumnIsAFittedRecipeAtAnotherScaleWithItsTwin) {
  std::set<std::string> fitted;
  for (const PublishedRun& r : published_runs()) fitted.insert(r.id);
  std::set<std::string> ids;
  for (const PublishedRun& r : unfitted_columns()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_EQ(fitted.count(r.id), 0u) << r.id << " is a fitted row";
    const auto& c = r.request.cfg;
    for (const std::string flag :
         {"--layers " + std::to_string(r.request.model.layers) + " ",
          "--pp " + std::to_string(c.pp) + " ", "--dp " + std::to_string(c.dp) + " ",
          "--gbs " + std::to_string(c.gbs) + " "})
      EXPECT_NE(r.options.find(flag), std::string::npos) << flag << " in " << r.options;
    EXPECT_EQ(r.options.find("--interleave ") != std::string::npos, c.interleave > 1) << r.options;
    EXPECT_EQ(r.request.cfg.gbs % (r.request.cfg.dp * r.request.cfg.mbs), 0) << r.label;
  }
  EXPECT_EQ(unfitted_columns().size(), 44u);
  EXPECT_EQ(check().pairs.size(), 22u);  // every BF16 column has its FP8 twin
}

// BF16 carries: every column within 5% (3.5% at most on 2026-12-06, mean 1.2%), the 405B
// proxies (one pipeline stage of 7 layers, three of 21 or 42) among them.
TEST(UnfittedColumns, Bf16StepsHoldAtEveryScaleAndProxyLayout) {
  for (const CalibrationRow& r : check().rows) {
    std::printf("%-45s published %7.3f s  lumos %7.3f s  %+5.1f%%\n", r.run->label.c_str(),
                r.published_step_s, r.step_time_s, r.error_pct);
    if (r.run->request.cfg.dtype == lumos::cost::Dtype::kBf16)
      EXPECT_LT(std::fabs(r.error_pct), 5.0) << r.run->label;
  }
  EXPECT_LT(check().bf16.mean_abs_pct, 2.0);
}

// FP8 carries outside Llama 3.1 405B: those steps and FP8/BF16 ratios within 5%. The 405B
// recipe's FP8 steps are all too slow (+4.7% without a pipeline, +6.2 to +8.8% with one), the
// known gap of its fitted pair (+6.4%); the bound of 10% guards that it does not grow.
TEST(UnfittedColumns, Fp8StepsAndRatiosHoldOutsideTheLlama405bRecipe) {
  for (const CalibrationRow& r : check().rows) {
    if (r.run->request.cfg.dtype != lumos::cost::Dtype::kFp8) continue;
    EXPECT_LT(std::fabs(r.error_pct), is_405b(r) ? 10.0 : 5.0) << r.run->label;
  }
  for (const DtypePair& p : check().pairs) {
    std::printf("%-45s FP8/BF16 published %.4f  lumos %.4f  %+5.1f%%\n", p.bf16->run->label.c_str(),
                p.published_ratio, p.lumos_ratio, p.error_pct);
    EXPECT_LT(std::fabs(p.error_pct), is_405b(*p.bf16) ? 10.0 : 5.0) << p.bf16->run->label;
  }
}

// How the FP8/BF16 ratio moves with data-parallel scale within one table (the replica skew at
// amax reductions, fitted on two tables' fitted columns alone) carries to the columns between:
// within each table the ratio's error spans at most 3 points (0.5 to 2.3 on 2026-12-06; the 405B
// proxies, which change the layers, aside). Published, 405B's ratio grows 0.7% from 576 to 2,304
// GPUs where lumos's grows 1.7%: the skew there is priced high, within this bound.
TEST(UnfittedColumns, RatioErrorsStayLevelAcrossScalesWithinEachTable) {
  size_t tables = 0;
  for (const UnfittedTable& t : check().tables) {
    std::printf("%-28s %d columns, ratio error %+5.1f%% to %+5.1f%%\n", t.name.c_str(), t.columns,
                t.ratio.least_pct, t.ratio.most_pct);
    EXPECT_LE(t.bf16.least_pct, t.bf16.most_pct) << t.name;
    if (t.name.find("proxies") != std::string::npos) continue;
    ++tables;
    EXPECT_LE(t.ratio.most_pct - t.ratio.least_pct, 3.0) << t.name;
  }
  EXPECT_EQ(tables, 5u);
  EXPECT_EQ(check().tables.size(), 6u);  // the 405B proxies apart
}
