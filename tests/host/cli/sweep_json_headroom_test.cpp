// `lumos sweep --json` and `--min-headroom`: the document's counts agree with the variants CSV
// the same run writes, its front is the front `lumos pareto` finds, and --min-headroom drops
// exactly the rows whose free memory (read from the CSV of a run without it) is below the share.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/csv_table.hpp"
#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;

// 16 GPUs x tp 1,2 x pp 1,2 x the three default GPU types: 12 configurations.
const std::string kSweep = "sweep --model llama3-8b --gpus 16 --tp 1,2 --pp 1,2 --threads 2";

size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) n += !line.empty();
  return n;
}

TEST(SweepJson, CountsAndFrontAgreeWithTheCsvs) {
  lumos::testing::TempDir tmp;
  const auto r = run_lumos(kSweep + " --top 3 --json -o " + tmp.file("v.csv") + " --pareto " +
                           tmp.file("p.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_EQ(p.parse(r.out).get(d), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(d["schema_version"].get_int64().value(), 1);
  EXPECT_EQ(d["configurations"].get_int64().value(), 12);
  const lumos::CsvTable v = lumos::read_csv(tmp.file("v.csv"));
  int64_t feasible = 0;
  for (const auto& row : v.rows) feasible += row[v.column("feasible")] == "1";
  EXPECT_EQ(d["feasible"].get_int64().value(), feasible);
  // The front is what `lumos pareto` wrote, row for row.
  EXPECT_EQ(static_cast<size_t>(d["on_front"].get_int64().value()),
            count_lines(tmp.file("p.csv")) - 1);
  EXPECT_EQ(d["front"].get_array().value().size(), count_lines(tmp.file("p.csv")) - 1);
  // The fastest three, in order of time to train, each a complete layout.
  simdjson::dom::array fastest = d["fastest"].get_array().value();
  ASSERT_EQ(fastest.size(), 3u);
  double previous = 0;
  int64_t rank = 0;
  for (simdjson::dom::element row : fastest) {
    const double ttt = row["time_to_train_h"].get_double().value();
    EXPECT_GE(ttt, previous);
    previous = ttt;
    EXPECT_EQ(row["rank"].get_int64().value(), ++rank);
    EXPECT_EQ(row["tp"].get_int64().value() * row["cp"].get_int64().value() *
                  row["pp"].get_int64().value() * row["dp"].get_int64().value(),
              16);
    EXPECT_FALSE(std::string(row["gpu"].get_string().value()).empty());
  }
  // Every configuration not shown is counted under one reason.
  int64_t tallied = 0;
  // A named array: a range over the temporary result would read it after its end.
  const simdjson::dom::array reasons = d["not_shown_by_reason"].get_array().value();
  for (simdjson::dom::element why : reasons) tallied += why["count"].get_int64().value();
  EXPECT_EQ(tallied, 12 - 3);
  EXPECT_EQ(d["not_shown"].get_int64().value(), 12 - 3);
  EXPECT_EQ(d["wrote"].get_array().value().size(), 2u);
}

TEST(SweepMinHeadroom, DropsExactlyTheRowsWithLessRoom) {
  lumos::testing::TempDir tmp;
  ASSERT_EQ(run_lumos(kSweep + " -o " + tmp.file("all.csv")).exit_code, 0);
  const lumos::CsvTable all = lumos::read_csv(tmp.file("all.csv"));
  const size_t fc = all.column("feasible"), hc = all.column("headroom_fraction");
  std::vector<bool> tight(all.rows.size());
  size_t n_tight = 0, n_roomy = 0;
  for (size_t i = 0; i < all.rows.size(); ++i) {
    if (all.rows[i][fc] != "1") continue;
    tight[i] = std::stod(all.rows[i][hc]) < 0.40;
    (tight[i] ? n_tight : n_roomy) += 1;
  }
  ASSERT_GT(n_tight, 0u) << "the sweep needs a row with under 40% free to test anything";
  ASSERT_GT(n_roomy, 0u);

  const auto r =
      run_lumos(kSweep + " --min-headroom 40% --json --top 100 -o " + tmp.file("roomy.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const lumos::CsvTable roomy = lumos::read_csv(tmp.file("roomy.csv"));
  ASSERT_EQ(roomy.rows.size(), all.rows.size());
  const size_t rc = roomy.column("reason");
  for (size_t i = 0; i < all.rows.size(); ++i) {
    if (tight[i]) {
      EXPECT_EQ(roomy.rows[i][fc], "0") << i;
      EXPECT_EQ(roomy.rows[i][rc].rfind("too tight", 0), 0u) << roomy.rows[i][rc];
    } else {
      EXPECT_EQ(roomy.rows[i], all.rows[i]) << i;
    }
  }
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_EQ(p.parse(r.out).get(d), simdjson::SUCCESS) << r.out;
  EXPECT_DOUBLE_EQ(d["min_headroom_fraction"].get_double().value(), 0.40);
  EXPECT_EQ(static_cast<size_t>(d["feasible"].get_int64().value()), n_roomy);
  // A named array: a range over the temporary result would read it after its end.
  const simdjson::dom::array fastest = d["fastest"].get_array().value();
  for (simdjson::dom::element row : fastest)
    EXPECT_GE(row["headroom_fraction"].get_double().value(), 0.40);
  const simdjson::dom::array front = d["front"].get_array().value();
  for (simdjson::dom::element row : front)
    EXPECT_GE(row["headroom_fraction"].get_double().value(), 0.40);
  bool counted = false;
  const simdjson::dom::array reasons = d["not_shown_by_reason"].get_array().value();
  for (simdjson::dom::element why : reasons)
    if (std::string(why["reason"].get_string().value()).find("--min-headroom") !=
        std::string::npos) {
      EXPECT_EQ(static_cast<size_t>(why["count"].get_int64().value()), n_tight);
      counted = true;
    }
  EXPECT_TRUE(counted) << r.out;

  // The text report says the same, in words.
  const auto text = run_lumos(kSweep + " --min-headroom 0.4");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find(std::to_string(n_tight) + " leave less memory free than --min-headroom"),
            std::string::npos)
      << text.out;
}

TEST(SweepMinHeadroom, BadValuesAndClashingOutputsAreOneLine) {
  for (const char* args : {" --min-headroom 150%", " --min-headroom lots", " --json -o -"}) {
    const auto r = run_lumos(kSweep + args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
  }
}

}  // namespace
