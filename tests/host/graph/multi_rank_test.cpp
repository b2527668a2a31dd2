// Multi-rank replay: collectives matched across ranks with a rendezvous. The 8-rank DLRM traces
// replay per rank within 2% with collective ends agreeing within 50 us; the wait/transfer split;
// a hand-computed straggler; clock alignment.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <cmath>

#include "graph/multi_rank.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/kineto_writer.hpp"

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

TEST(MultiRank, DlrmEightRanksReplayWithinTwoPercentAndCollectivesEndTogether) {
  LUMOS_REQUIRE_TRACES();
  const auto m = lumos::graph::load_multi_rank(lumos::testing::trace_dir() + "/param/dlrm_kineto");
  ASSERT_EQ(m.ranks.size(), 8u);
  ASSERT_EQ(m.collectives.size(), 8u);
  const auto r = lumos::replay::reference_replay(m.graph);
  for (const auto& s : lumos::replay::step_times(m.graph, r))
    EXPECT_LE(std::fabs(s.error_pct), 2.0) << "rank " << s.rank;
  for (const auto& c : m.collectives) {
    double lo = 1e300, hi = -1e300;
    for (auto t : c.transfer) lo = std::min(lo, r.finish_us[t]), hi = std::max(hi, r.finish_us[t]);
    EXPECT_LE(hi - lo, 50.0) << c.name;
    // Waits come out of the rendezvous: the transfer nodes last only the transfer time.
    for (size_t i = 0; i < c.transfer.size(); ++i)
      EXPECT_NEAR(r.finish_us[c.transfer[i]] - r.start_us[c.transfer[i]], c.transfer_us[i], 1e-6);
  }
  for (double s : m.clock_shift_us) EXPECT_LE(std::fabs(s), 10.0);  // one clock: shifts are noise
}

TEST(MultiRank, TransferIsAlikeAcrossRanksWhileWaitIsNot) {
  LUMOS_REQUIRE_TRACES();
  const auto m = lumos::graph::load_multi_rank(lumos::testing::trace_dir() + "/param/dlrm_kineto");
  int checked = 0;
  for (const auto& c : m.collectives) {
    const auto [wmin, wmax] = std::minmax_element(c.wait_us.begin(), c.wait_us.end());
    const auto [tmin, tmax] = std::minmax_element(c.transfer_us.begin(), c.transfer_us.end());
    EXPECT_DOUBLE_EQ(*wmin, 0.0) << c.name;  // the last to arrive waits for nobody
    if (*wmax < 100) continue;
    ++checked;
    EXPECT_LT(*tmax - *tmin, 0.25 * (*wmax - *wmin)) << c.name;
  }
  EXPECT_GE(checked, 4);
}

namespace {

// Four ranks: a 100 us GEMM, then a 20 us all-reduce on the same stream; identical timings.
void write_four_ranks(const TempDir& tmp, double rank3_clock_offset_us = 0) {
  for (int r = 0; r < 4; ++r) {
    lumos::trace::KinetoWriter w;
    w.set_rank(r, 4);
    const double o = r == 3 ? rank3_clock_offset_us : 0;
    w.annotation(1, "ProfilerStep#1", o, 135);
    w.launch(1, "cudaLaunchKernel", o + 1, 5, "kernel", "gemm", 0, 7, o + 10, 100);
    w.launch(1, "cudaLaunchKernel", o + 7, 5, "kernel",
             "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0, 7, o + 110, 20);
    tmp.write("rank" + std::to_string(r) + ".json", w.json());
  }
}

std::vector<double> collective_ends(const std::string& json) {
  simdjson::dom::parser p;
  const auto d = p.parse(json);
  std::vector<double> out;
  for (auto x : d["collectives"].at(0)["replayed_end_us"].get_array())
    out.push_back(x.get_double().value());
  return out;
}

}  // namespace

TEST(MultiRank, SlowingOneRankDelaysEveryRankAtTheNextCollective) {
  TempDir tmp;
  write_four_ranks(tmp);
  const auto base = run_lumos("replay " + tmp.path() + " --json");
  ASSERT_EQ(base.exit_code, 0) << base.out;
  const auto slow = run_lumos("replay " + tmp.path() + " --slow-rank 1:1.5 --json");
  ASSERT_EQ(slow.exit_code, 0) << slow.out;
  const auto skew = run_lumos("replay " + tmp.path() + " --skew 2:30 --json");
  ASSERT_EQ(skew.exit_code, 0) << skew.out;
  const auto b = collective_ends(base.out), s = collective_ends(slow.out),
             k = collective_ends(skew.out);
  ASSERT_EQ(b.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    // By hand: rank 1's GEMM takes 150 instead of 100 us, so it arrives 50 us late, and every
    // rank's 20 us transfer starts then.
    EXPECT_NEAR(s[r] - b[r], 50.0, 1e-6) << "rank " << r;
    // Rank 2 starts 30 us late: everyone's all-reduce ends 30 us later.
    EXPECT_NEAR(k[r] - b[r], 30.0, 1e-6) << "rank " << r;
  }
  EXPECT_NE(slow.out.find("\"straggler\":{\"rank\":1"), std::string::npos) << slow.out;
  EXPECT_EQ(run_lumos("replay " + tmp.path() + " --slow-rank 9:2").exit_code, 1);
  EXPECT_EQ(run_lumos("replay " + tmp.path() + " --skew x").exit_code, 1);
}

TEST(MultiRank, ClocksAreAlignedOnCollectiveEnds) {
  TempDir tmp;
  write_four_ranks(tmp, 500);  // rank 3's clock runs 500 us ahead
  std::vector<lumos::trace::EventTable> tables;
  for (int r = 0; r < 4; ++r)
    tables.push_back(lumos::trace::load_trace(tmp.file("rank" + std::to_string(r) + ".json")));
  const auto m = lumos::graph::build_multi_rank(std::move(tables));
  EXPECT_NEAR(m.clock_shift_us[3], -500.0, 1e-6);
  EXPECT_NEAR(m.clock_shift_us[1], 0.0, 1e-6);
  for (double w : m.collectives[0].wait_us) EXPECT_NEAR(w, 0.0, 1e-6);
}

TEST(MultiRank, DifferentCollectiveCountsAreAClearError) {
  TempDir tmp;
  write_four_ranks(tmp);
  lumos::trace::KinetoWriter w;
  w.set_rank(3, 4);
  w.launch(1, "cudaLaunchKernel", 1, 5, "kernel", "gemm", 0, 7, 10, 100);
  tmp.write("rank3.json", w.json());
  const auto r = run_lumos("replay " + tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("issued 0 NCCL kernels"), std::string::npos) << r.out;
}

namespace {

// An NCCL kernel with NCCL args (group, sequence) and its launch 5 us before.
void add_nccl_kernel(lumos::trace::KinetoWriter& w, double ts, const char* pg, int seq,
                     int64_t corr, const char* collective, double dur = 10) {
  w.add("cuda_runtime", "cudaLaunchKernel", lumos::trace::KinetoWriter::kPid, 1, ts - 5, 3,
        {{"correlation", corr}});
  w.add("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0, 20, ts, dur,
        {{"correlation", corr},
         {"stream", 20},
         {"device", 0},
         {"Process Group Name", pg},
         {"Seq", seq},
         {"Collective name", collective},
         {"Group size", 2}});
}

}  // namespace

TEST(MultiRank, KernelsWithNcclArgsMeetByProcessGroupAndSequence) {
  // Ranks 0 and 1 share group "tp" (two all-reduces); rank 2 runs one all-reduce in group "dp"
  // with rank 0. Order of issue alone would pair the wrong kernels.
  TempDir tmp;
  // Kernels of one collective end together (one clock), as NCCL's do.
  auto nccl = [](lumos::trace::KinetoWriter& w, double ts, const char* pg, int seq, int64_t corr,
                 double end) { add_nccl_kernel(w, ts, pg, seq, corr, "allreduce", end - ts); };
  lumos::trace::KinetoWriter r0, r1, r2;
  r0.set_rank(0, 3), r1.set_rank(1, 3), r2.set_rank(2, 3);
  nccl(r0, 100, "tp", 1, 900, 130), nccl(r0, 200, "dp", 1, 901, 210),
      nccl(r0, 300, "tp", 2, 902, 310);
  nccl(r1, 120, "tp", 1, 900, 130), nccl(r1, 290, "tp", 2, 901, 310);
  nccl(r2, 180, "dp", 1, 900, 210);
  tmp.write("r0.json", r0.json()), tmp.write("r1.json", r1.json()), tmp.write("r2.json", r2.json());
  const auto m = lumos::graph::load_multi_rank(tmp.path());
  ASSERT_EQ(m.collectives.size(), 3u);
  // tp#1: ranks 0 and 1, rank 0 waits 20 us; dp#1: ranks 0 and 2, rank 2 waits 20 us.
  EXPECT_EQ(m.collectives[0].rank_index, (std::vector<size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(m.collectives[0].wait_us[0], 20.0);
  EXPECT_EQ(m.collectives[1].rank_index, (std::vector<size_t>{0, 2}));
  EXPECT_DOUBLE_EQ(m.collectives[1].wait_us[1], 20.0);
  EXPECT_EQ(m.collectives[2].rank_index, (std::vector<size_t>{0, 1}));
}

TEST(MultiRank, KeyedClocksAlignThroughNeighboursThatShareCollectives) {
  // Pipeline-like groups: rank 2 shares no collective with rank 0, only "b" with rank 1. Each
  // rank's clock is offset; true ends of a shared collective agree.
  TempDir tmp;
  auto nccl = [](lumos::trace::KinetoWriter& w, double ts, const char* pg, int seq, int64_t corr) {
    add_nccl_kernel(w, ts, pg, seq, corr, "send");
  };
  lumos::trace::KinetoWriter r0, r1, r2;
  r0.set_rank(0, 3), r1.set_rank(1, 3), r2.set_rank(2, 3);
  nccl(r0, 100, "a", 1, 900), nccl(r0, 300, "a", 2, 901);
  nccl(r1, 200, "a", 1, 900), nccl(r1, 600, "b", 1, 901);  // clock 100 us ahead
  nccl(r2, 750, "b", 1, 900), nccl(r2, 900, "c", 1, 901);  // clock 250 us ahead
  tmp.write("r0.json", r0.json()), tmp.write("r1.json", r1.json()), tmp.write("r2.json", r2.json());
  const auto m = lumos::graph::load_multi_rank(tmp.path());
  ASSERT_EQ(m.clock_shift_us.size(), 3u);
  EXPECT_DOUBLE_EQ(m.clock_shift_us[1], -100.0);
  EXPECT_DOUBLE_EQ(m.clock_shift_us[2], -250.0);
}
