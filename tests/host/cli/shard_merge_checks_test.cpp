// `lumos pareto` over shards' CSVs (sweep --shard i/n) takes only a whole sweep: every shard once,
// all of one sweep and one split, their variants (not fronts) for --merge. Each refusal is one
// line and exit code 1, and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_util.hpp"

namespace {

using lumos::testing::expect_one_line_exit_1;
using lumos::testing::run_lumos;
using lumos::testing::TempDir;

const std::string kSweep =
    "sweep --layers 4 --gpus 64 --tp 1,2 --pp 1,2 --gpu h100,h200 --threads 2";

// Shard i of n of `sweep` as <dir>/<name>i.csv (variants) and <dir>/<name>i.front.csv.
void shard(const TempDir& tmp, const std::string& sweep, int i, int n, const std::string& name) {
  const std::string base = tmp.file(name + std::to_string(i));
  const auto r = run_lumos(sweep + " --shard " + std::to_string(i) + "/" + std::to_string(n) +
                           " -o " + base + ".csv --pareto " + base + ".front.csv");
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

class ShardSet : public ::testing::Test {
 protected:
  void SetUp() override {
    shard(tmp, kSweep, 0, 2, "s");
    shard(tmp, kSweep, 1, 2, "s");
  }
  // `pareto ARGS -o out.csv`, which must fail as bad input naming `needle` and leave no file.
  void refused(const std::string& args, const std::string& needle) {
    const auto r = run_lumos("pareto " + args + " -o " + tmp.file("out.csv"));
    expect_one_line_exit_1(r, needle);
    EXPECT_FALSE(std::filesystem::exists(tmp.file("out.csv"))) << args;
  }
  // `pareto ARGS` writes what the whole sweep writes with `whole_flag` (-o or --pareto).
  void same_as_whole_sweep(const std::string& whole_flag, const std::string& args) {
    ASSERT_EQ(run_lumos(kSweep + " " + whole_flag + " " + tmp.file("whole.csv")).exit_code, 0);
    const auto r = run_lumos("pareto " + args + " -o " + tmp.file("joined.csv"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(slurp(tmp.file("joined.csv")), slurp(tmp.file("whole.csv")));
  }
  TempDir tmp;
};

TEST_F(ShardSet, AShardsCsvStartsWithItsSweepLine) {
  const std::string line = first_line(tmp.file("s1.csv"));
  EXPECT_EQ(line.rfind("#lumos-sweep version=", 0), 0u) << line;
  EXPECT_NE(line.find(" configurations=8 shard=1/2 rows=4 kind=variants"), std::string::npos)
      << line;
  EXPECT_NE(first_line(tmp.file("s1.front.csv")).find(" shard=1/2 "), std::string::npos);
  EXPECT_NE(first_line(tmp.file("s1.front.csv")).find(" kind=front"), std::string::npos);
  // Both shards name the same sweep.
  EXPECT_EQ(line.substr(0, line.find(" configurations=")),
            first_line(tmp.file("s0.csv")).substr(0, line.find(" configurations=")));
}

TEST_F(ShardSet, EveryShardMergesToTheWholeSweepWithoutTheLine) {
  same_as_whole_sweep("-o", "--merge " + tmp.file("s1.csv") + " " + tmp.file("s0.csv"));
}

TEST_F(ShardSet, AMissingShardIsRefused) {
  refused("--merge " + tmp.file("s0.csv"), "shard 1 of 2 of the sweep is missing");
  refused(tmp.file("s0.front.csv"), "shard 1 of 2 of the sweep is missing");
}

TEST_F(ShardSet, AShardGivenTwiceIsRefused) {
  std::filesystem::copy_file(tmp.file("s1.csv"), tmp.file("again.csv"));
  refused("--merge " + tmp.file("s0.csv") + " " + tmp.file("s1.csv") + " " + tmp.file("again.csv"),
          "are both shard 1/2 of the sweep");
}

TEST_F(ShardSet, AFrontGivenToMergeIsRefused) {
  refused("--merge " + tmp.file("s0.csv") + " " + tmp.file("s1.front.csv"),
          "s1.front.csv is shard 1/2's Pareto front");
}

TEST_F(ShardSet, AWholeSweepsFrontAmongShardsIsRefused) {
  ASSERT_EQ(run_lumos(kSweep + " --pareto " + tmp.file("front.csv")).exit_code, 0);
  refused("--merge " + tmp.file("s0.csv") + " " + tmp.file("s1.csv") + " " + tmp.file("front.csv"),
          "front.csv has no #lumos-sweep line");
}

TEST_F(ShardSet, ShardsOfAnotherSweepAreRefused) {
  shard(tmp, kSweep + " --gbs 64", 1, 2, "other");
  refused("--merge " + tmp.file("s0.csv") + " " + tmp.file("other1.csv"),
          "other1.csv is from another sweep than");
}

TEST_F(ShardSet, ShardsOfAnotherSplitAreRefused) {
  shard(tmp, kSweep, 1, 3, "third");
  refused("--merge " + tmp.file("s0.csv") + " " + tmp.file("third1.csv"),
          "third1.csv is shard 1/3 but");
}

TEST_F(ShardSet, ACutShardIsRefused) {
  std::ifstream in(tmp.file("s1.csv"));
  std::ofstream out(tmp.file("cut.csv"));
  std::string line;
  for (int i = 0; i < 3 && std::getline(in, line); ++i) out << line << '\n';
  out.close();
  refused("--merge " + tmp.file("s0.csv") + " " + tmp.file("cut.csv"),
          "cut.csv holds 1 rows but its #lumos-sweep line counts 4");
}

TEST_F(ShardSet, TheShardsFrontsGiveTheWholeFront) {
  same_as_whole_sweep("--pareto", tmp.file("s0.front.csv") + " " + tmp.file("s1.front.csv"));
}

}  // namespace
