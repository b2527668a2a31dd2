// Shards joined back: rows in `index` order whatever the order of the parts, the same table as
// the whole sweep's, and parts that cannot be joined fail in one line.
#include <gtest/gtest.h>

#include <sstream>

#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "report/sweep_csv.hpp"
#include "sweep/shard_merge.hpp"
#include "sweep/sweep_run.hpp"

namespace {

using lumos::CsvTable;

CsvTable table(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  return lumos::parse_csv(in, source);
}

std::string csv_of(const lumos::sweep::SweepResult& r) {
  std::ostringstream os;
  lumos::report::sweep_csv(os, r);
  return os.str();
}

TEST(ShardMerge, RowsComeBackInIndexOrder) {
  std::vector<CsvTable> parts;
  parts.push_back(table("index,a\n3,x\n1,y\n", "p1.csv"));
  parts.push_back(table("index,a\n2,z\n0,w\n", "p2.csv"));
  const CsvTable t = lumos::sweep::merge_shards(std::move(parts));
  EXPECT_EQ(t.source, "p1.csv");
  ASSERT_EQ(t.rows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(t.rows[i][0], std::to_string(i));
  EXPECT_EQ(t.rows[0][1], "w");
}

TEST(ShardMerge, WithoutAnIndexThePartsKeepTheirOrder) {
  std::vector<CsvTable> parts;
  parts.push_back(table("a,b\n2,x\n", "p1.csv"));
  parts.push_back(table("a,b\n1,y\n", "p2.csv"));
  const CsvTable t = lumos::sweep::merge_shards(std::move(parts));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][1], "x");
}

TEST(ShardMerge, PartsThatCannotBeJoinedFailInOneLine) {
  auto error_of = [](std::vector<CsvTable> parts) -> std::string {
    try {
      lumos::sweep::merge_shards(std::move(parts));
    } catch (const lumos::InputError& e) {
      return e.what();
    }
    return "";
  };
  std::vector<CsvTable> other;
  other.push_back(table("index,a\n0,x\n", "p1.csv"));
  other.push_back(table("index,b\n1,x\n", "p2.csv"));
  EXPECT_EQ(error_of(std::move(other)),
            "p2.csv: its columns differ from p1.csv's; expected the same CSV kind");
  std::vector<CsvTable> twice;
  twice.push_back(table("index,a\n0,x\n", "p1.csv"));
  twice.push_back(table("index,a\n0,x\n", "p1.csv"));
  EXPECT_NE(error_of(std::move(twice)).find("configuration 0 is in the inputs twice"),
            std::string::npos);
  std::vector<CsvTable> bad;
  bad.push_back(table("index,a\n-1,x\n", "p1.csv"));
  EXPECT_EQ(error_of(std::move(bad)),
            "p1.csv:2: column 'index': '-1' is not a non-negative integer");
  EXPECT_NE(error_of({}), "");
}

// The shards of a real sweep, merged (as gathered from MPI ranks, stats first), give the whole
// sweep's table and its statistics' counts.
TEST(ShardMerge, ShardsOfASweepMergeToTheWholeSweep) {
  lumos::sweep::SweepSpec spec;
  spec.model = lumos::model::preset("gpt3-15b");
  spec.model.layers = 4;
  spec.total_gpus = {8, 16};
  spec.tp = {1, 2};
  spec.pp = {1, 2};
  spec.gbs = {32};
  spec.gpus = {"h100", "a100"};
  const auto& db = lumos::cost::embedded_db();
  const lumos::sweep::SweepResult whole = lumos::sweep::run_sweep(spec, db, {});
  std::vector<std::string> parts;
  for (uint32_t i = 0; i < 3; ++i) {
    lumos::sweep::SweepOptions opt;
    opt.shard = 2 - i, opt.shards = 3;
    const lumos::sweep::SweepResult r = lumos::sweep::run_sweep(spec, db, opt);
    parts.push_back(lumos::sweep::stats_line(r.stats) + "\n" + csv_of(r));
  }
  lumos::sweep::SweepStats stats;
  const CsvTable merged = lumos::sweep::merge_gathered(parts, "over a,b", &stats);
  std::ostringstream os;
  std::vector<size_t> all(merged.rows.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  lumos::report::write_csv(os, lumos::csv_view(merged), all);
  EXPECT_EQ(os.str(), csv_of(whole));
  EXPECT_EQ(stats.variants, whole.stats.variants);
  EXPECT_EQ(stats.rows, whole.stats.rows);
  EXPECT_EQ(stats.groups, whole.stats.groups);
  EXPECT_EQ(stats.estimated, whole.stats.estimated);
}

}  // namespace
