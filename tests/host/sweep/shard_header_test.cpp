// The #lumos-sweep line of a shard's CSVs read back as written, and the checks `lumos pareto`
// makes of a set of shards: every shard once, of one sweep and split, fronts only outside --merge.
#include <gtest/gtest.h>

#include <sstream>

#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "sweep/shard_header.hpp"

namespace {

using lumos::sweep::check_shard_set;
using lumos::sweep::ShardHeader;
using lumos::sweep::ShardInput;

ShardHeader header(uint32_t shard, uint32_t shards, uint64_t rows = 3, bool front = false) {
  return {"0.1.0", "0123456789abcdef", 10, shard, shards, rows, front};
}

ShardInput input(const std::string& source, const ShardHeader& h) {
  return {source, h, h.rows};
}

std::string error_of(const std::vector<ShardInput>& in, bool merge) {
  try {
    check_shard_set(in, merge);
  } catch (const lumos::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ShardHeader, TheLineReadsBackAsWritten) {
  const ShardHeader h = header(2, 5, 7, true);
  const std::string line = lumos::sweep::shard_header_line(h);
  EXPECT_EQ(line,
            "#lumos-sweep version=0.1.0 sweep=0123456789abcdef configurations=10 shard=2/5 rows=7 "
            "kind=front");
  const auto back = lumos::sweep::find_shard_header({"# other", line}, "s.csv");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->sweep, h.sweep);
  EXPECT_EQ(back->configurations, 10u);
  EXPECT_EQ(back->shard, 2u);
  EXPECT_EQ(back->shards, 5u);
  EXPECT_EQ(back->rows, 7u);
  EXPECT_TRUE(back->front);
  EXPECT_FALSE(lumos::sweep::find_shard_header({"# other"}, "s.csv").has_value());
}

TEST(ShardHeader, ACsvReaderKeepsTheLineApartFromTheColumns) {
  std::istringstream in("#lumos-sweep x\nindex,a\n0,1\n");
  const lumos::CsvTable t = lumos::parse_csv(in, "s.csv");
  ASSERT_EQ(t.comments.size(), 1u);
  EXPECT_EQ(t.header, (std::vector<std::string>{"index", "a"}));
  EXPECT_EQ(t.rows.size(), 1u);
}

TEST(ShardHeader, AMalformedLineIsNamed) {
  EXPECT_THROW(lumos::sweep::find_shard_header({"#lumos-sweep version=1"}, "s.csv"),
               lumos::InputError);
  EXPECT_THROW(lumos::sweep::find_shard_header(
                   {"#lumos-sweep version=1 sweep=a configurations=4 shard=3/2 rows=1 "
                    "kind=variants"},
                   "s.csv"),
               lumos::InputError);
}

TEST(ShardHeader, FingerprintsDifferWithTheDescription) {
  EXPECT_EQ(lumos::sweep::sweep_fingerprint("tp=1,2"), lumos::sweep::sweep_fingerprint("tp=1,2"));
  EXPECT_NE(lumos::sweep::sweep_fingerprint("tp=1,2"), lumos::sweep::sweep_fingerprint("tp=1,4"));
  EXPECT_EQ(lumos::sweep::sweep_fingerprint("").size(), 16u);
}

TEST(ShardSetCheck, EveryShardOnceInAnyOrderPasses) {
  EXPECT_EQ(error_of({input("b", header(1, 3)), input("c", header(2, 3)), input("a", header(0, 3))},
                     true),
            "");
  EXPECT_EQ(error_of({{"plain.csv", std::nullopt, 4}}, true), "");  // not a shard: no check
}

TEST(ShardSetCheck, GapsAreNamed) {
  EXPECT_EQ(error_of({input("a", header(0, 3))}, true),
            "lumos pareto: shards 1, 2 of 3 of the sweep are missing (1 given); give every "
            "shard's CSV");
}

TEST(ShardSetCheck, DuplicatesAreNamed) {
  EXPECT_EQ(error_of({input("a", header(0, 2)), input("b", header(1, 2)), input("c", header(0, 2))},
                     false),
            "lumos pareto: c and a are both shard 0/2 of the sweep (the same shard given twice?)");
}

TEST(ShardSetCheck, FrontsAreRefusedOnlyByMerge) {
  const std::vector<ShardInput> fronts = {input("f0", header(0, 2, 1, true)),
                                          input("f1", header(1, 2, 1, true))};
  EXPECT_EQ(error_of(fronts, false), "");
  EXPECT_NE(error_of(fronts, true).find("f0 is shard 0/2's Pareto front"), std::string::npos);
}

TEST(ShardSetCheck, MixturesAreRefused) {
  ShardHeader other = header(1, 2);
  other.sweep = "fedcba9876543210";
  EXPECT_NE(error_of({input("a", header(0, 2)), input("b", other)}, true)
                .find("b is from another sweep than a"),
            std::string::npos);
  EXPECT_NE(error_of({input("a", header(0, 2)), input("b", header(1, 3))}, true)
                .find("b is shard 1/3 but a is shard 0/2"),
            std::string::npos);
  EXPECT_NE(error_of({input("a", header(0, 1)), {"plain.csv", std::nullopt, 3}}, true)
                .find("plain.csv has no #lumos-sweep line"),
            std::string::npos);
}

TEST(ShardSetCheck, ARowCountOtherThanTheLinesIsRefused) {
  ShardInput cut = input("a", header(0, 1, 5));
  cut.rows = 2;
  EXPECT_EQ(error_of({cut}, true),
            "lumos pareto: a holds 2 rows but its #lumos-sweep line counts 5 (a cut or edited "
            "file?)");
}

}  // namespace
