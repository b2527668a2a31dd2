// A folder of per-rank traces replays as one job only when it holds all of it: a missing rank of
// the declared world size, a broken link among the rank files, or traces of different jobs are
// errors naming the problem; --allow-partial turns the first two into warnings that name the
// missing ranks. A writer that traces one rank per stage (lumos generate) declares the ranks it
// traced, and such a folder is complete.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.hpp"
#include "graph/multi_rank.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_writer.hpp"

using lumos::InputError;
using lumos::graph::load_multi_rank;
using lumos::testing::run_lumos;
using lumos::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// Rank r of a world: a 100 us GEMM, then a 20 us all-reduce on the same stream.
std::string rank_trace(int rank, int world, std::vector<int> traced = {}) {
  lumos::trace::KinetoWriter w;
  w.set_rank(rank, world);
  w.set_traced_ranks(std::move(traced));
  w.annotation(1, "ProfilerStep#1", 0, 135);
  w.launch(1, "cudaLaunchKernel", 1, 5, "kernel", "gemm", 0, 7, 10, 100);
  w.launch(1, "cudaLaunchKernel", 7, 5, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0,
           7, 110, 20);
  return w.json();
}

void write_ranks(const TempDir& tmp, int world, const std::vector<int>& ranks) {
  for (int r : ranks) tmp.write("rank" + std::to_string(r) + ".json", rank_trace(r, world));
}

std::string error_of(const std::string& dir, bool allow_partial = false) {
  try {
    load_multi_rank(dir, allow_partial);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MultiRankFolder, AMissingRankOfTheWorldIsAnErrorNamingIt) {
  TempDir tmp;
  write_ranks(tmp, 8, {0, 1, 2, 4, 5, 6, 7});
  EXPECT_EQ(error_of(tmp.path()), tmp.path() +
                                      ": rank 3 of world size 8 has no trace (--allow-partial "
                                      "replays the ranks present)");
  tmp.write("rank3.json", rank_trace(3, 8));
  EXPECT_EQ(load_multi_rank(tmp.path()).ranks.size(), 8u);
}

TEST(MultiRankFolder, AllowPartialReplaysThePresentRanksWithAWarningNamingTheMissing) {
  TempDir tmp;
  write_ranks(tmp, 8, {0, 2, 4, 5, 6, 7});
  const auto m = load_multi_rank(tmp.path(), true);
  EXPECT_EQ(m.ranks.size(), 6u);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(
      m.warnings[0],
      tmp.path() + ": ranks 1, 3 of world size 8 have no trace; replaying the 6 ranks present");
  // Through the command: exit 0, the warning on stderr, the replay goes on.
  const auto r = run_lumos("replay " + tmp.path() + " --allow-partial");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("lumos replay: warning: " + tmp.path() + ": ranks 1, 3 of world size 8"),
            std::string::npos)
      << r.out;
  const auto strict = run_lumos("replay " + tmp.path());
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  EXPECT_NE(strict.out.find("ranks 1, 3 of world size 8 have no trace"), std::string::npos);
}

TEST(MultiRankFolder, ABrokenLinkAmongTheRankFilesIsAnError) {
  TempDir tmp;
  write_ranks(tmp, 4, {0, 1, 2});
  fs::create_symlink(tmp.file("gone.json"), tmp.file("rank3.json"));
  EXPECT_EQ(error_of(tmp.path()),
            tmp.file("rank3.json") +
                ": a broken link (its target does not exist); --allow-partial replays the other "
                "ranks");
  const auto m = load_multi_rank(tmp.path(), true);
  EXPECT_EQ(m.ranks.size(), 3u);
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_NE(m.warnings[0].find("rank3.json: a broken link"), std::string::npos);
  EXPECT_NE(m.warnings[1].find("rank 3 of world size 4 has no trace"), std::string::npos);
}

TEST(MultiRankFolder, TracesOfDifferentJobsAreAnErrorEvenWhenPartialIsAllowed) {
  TempDir tmp;
  write_ranks(tmp, 4, {0, 1, 2});
  tmp.write("rank3.json", rank_trace(3, 8));
  const std::string want = tmp.path() + ": traces of different jobs: " + tmp.file("rank0.json") +
                           " declares world size 4, " + tmp.file("rank3.json") + " 8";
  EXPECT_EQ(error_of(tmp.path()), want);
  EXPECT_EQ(error_of(tmp.path(), true), want);
  // A rank beyond its world is no rank of that job.
  TempDir out;
  write_ranks(out, 2, {0, 1});
  out.write("rank5.json", rank_trace(5, 2));
  EXPECT_NE(error_of(out.path())
                .find("rank5.json: field 'distributedInfo.rank': expected a rank below the world "
                      "size 2, got 5"),
            std::string::npos)
      << error_of(out.path());
}

TEST(MultiRankFolder, DeclaredTracedRanksMakeARepresentativeFolderComplete) {
  // One rank per pipeline stage of a 16-GPU job, as `lumos generate` writes.
  TempDir tmp;
  tmp.write("stage0.json", rank_trace(0, 16, {0, 8}));
  tmp.write("stage1.json", rank_trace(8, 16, {0, 8}));
  const auto m = load_multi_rank(tmp.path());
  EXPECT_EQ(m.ranks, (std::vector<int32_t>{0, 8}));
  EXPECT_TRUE(m.warnings.empty());
  fs::remove(tmp.file("stage1.json"));
  EXPECT_EQ(error_of(tmp.path()), tmp.path() +
                                      ": rank 8 of world size 16 has no trace (--allow-partial "
                                      "replays the ranks present)");
  tmp.write("stage1.json", rank_trace(8, 16, {0, 4}));
  EXPECT_NE(error_of(tmp.path()).find("list different traced ranks"), std::string::npos);
}

TEST(MultiRankFolder, ALongListOfMissingRanksIsCut) {
  TempDir tmp;
  write_ranks(tmp, 1000, {0, 999});
  EXPECT_EQ(error_of(tmp.path()),
            tmp.path() +
                ": ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 and 982 more of "
                "world size 1000 have no trace (--allow-partial replays the ranks present)");
}
