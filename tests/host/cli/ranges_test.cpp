// Integer and float options are range-checked when they are parsed: an absurd layout, a count
// that does not fit, a size or bandwidth beyond any real one, a straggler factor of 1e308 get
// one line naming the option and exit code 1, never a silent truncation or "MFU inf%".
#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_util.hpp"
#include "trace/kineto_writer.hpp"

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

namespace {

void expect_one_line_exit_1(const std::string& args, const std::string& needle) {
  const auto r = run_lumos(args);
  EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
}

// Two ranks of one job, each with a GEMM and an all-reduce.
void write_two_ranks(TempDir& tmp) {
  for (int r = 0; r < 2; ++r) {
    lumos::trace::KinetoWriter w;
    w.set_rank(r, 2);
    w.annotation(1, "ProfilerStep#1", 0, 135);
    w.launch(1, "cudaLaunchKernel", 1, 5, "kernel", "gemm", 0, 7, 10, 100);
    w.launch(1, "cudaLaunchKernel", 7, 5, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0,
             7, 110, 20);
    tmp.write("rank" + std::to_string(r) + ".json", w.json());
  }
}

}  // namespace

// Row 10: 2^20 x 2^20 x 2^20 x 128 GPUs overflowed int64 into "on 0 x h100" and "MFU inf%".
TEST(Ranges, EstimateRefusesLayoutsWhoseGpuCountOverflows) {
  expect_one_line_exit_1("estimate --tp 1048576 --cp 1048576 --dp 1048576 --pp 128",
                         "--tp must be between 1 and 65536");
  expect_one_line_exit_1("estimate --model llama3-8b --tp 8 --cp 256 --dp 1024 --pp 4 --gbs 4096",
                         "at most 1048576 are supported");
}

TEST(Ranges, EstimateIntegerOptionsAreCheckedWithTheirName) {
  expect_one_line_exit_1("estimate --tp -3", "--tp must be between 1 and");
  expect_one_line_exit_1("estimate --gbs 0", "--gbs must be between 1 and 16777216 (got 0)");
  expect_one_line_exit_1("estimate --gbs 99999999999",
                         "--gbs must be between 1 and 16777216 (got 99999999999)");
  expect_one_line_exit_1("estimate --mbs 0", "--mbs must be between 1 and");
  expect_one_line_exit_1("estimate --interleave 0", "--interleave must be between 1 and");
  expect_one_line_exit_1("estimate --search --gpus 8 --top -1",
                         "--top must be between 0 and 1000000 (got -1)");
  expect_one_line_exit_1("estimate --search --gpus 0",
                         "--gpus must be between 1 and 1048576 (got 0)");
  expect_one_line_exit_1("estimate --gpus-per-node 0",
                         "--gpus-per-node must be between 1 and 1024 (got 0)");
  expect_one_line_exit_1("estimate --nvlink-bandwidth 0GB/s", "--nvlink-bandwidth");
  expect_one_line_exit_1("sweep --gpus-per-node 2048", "GPUs per node 2048: expected 1 to 1024");
  expect_one_line_exit_1("sweep --nvlink-bandwidth fast", "--nvlink-bandwidth");
  const auto r = run_lumos("estimate --tp 4294967298");  // does not fit an int
  EXPECT_EQ(r.exit_code, 1) << r.out;
}

// Row 12: --ranks 4294967304 was read as 8 ranks.
TEST(Ranges, CostCountsAreReadAs64BitsAndNotTruncated) {
  expect_one_line_exit_1("cost collective --bytes 1GiB --ranks 4294967304",
                         "--ranks must be between 1 and 1048576 (got 4294967304)");
  expect_one_line_exit_1("cost collective --bytes 1GiB --ranks 8 --ranks-per-node 4294967304",
                         "--ranks-per-node must be between 1 and");
  expect_one_line_exit_1("cost collective --bytes 1GiB --ranks 8 --nics-per-gpu 4294967297",
                         "--nics-per-gpu must be between 1 and 1024");
  expect_one_line_exit_1("cost gemm --m 4096 --n 4096 --k 99999999999999999",
                         "--k must be between 1 and");
  expect_one_line_exit_1("cost attention --batch 1 --heads 8 --seq -5", "--seq must be between 1");
  expect_one_line_exit_1("cost attention --batch 1 --heads 8 --seq 1099511627776",
                         "--seq must be between 1 and 16777216");
  expect_one_line_exit_1("cost optimizer --params 1e300", "--params must be at most 1e15");
}

// Row 13: 1e300TiB overflowed to infinity and failed later with a message about the algorithm.
TEST(Ranges, CostSizesBeyond2To53BytesAreOutOfRange) {
  expect_one_line_exit_1("cost collective --bytes 1e300TiB --ranks 8",
                         "--bytes: size '1e300TiB' is out of range");
  expect_one_line_exit_1("cost memory --bytes 1e17", "--bytes: size '1e17' is out of range");
  EXPECT_EQ(run_lumos("cost collective --bytes 9.1e15 --ranks 8").exit_code, 1);  // > 2^53
  EXPECT_EQ(run_lumos("cost memory --bytes 1TiB").exit_code, 0);
}

// Row 14: fp32 attention was answered with the bf16 table.
TEST(Ranges, CostAttentionRefusesDtypesItDoesNotModel) {
  expect_one_line_exit_1("cost attention --batch 1 --heads 8 --seq 4096 --dtype fp32",
                         "dtype fp32 is not modelled");
  expect_one_line_exit_1("cost attention --batch 1 --heads 8 --seq 4096 --dtype tf32",
                         "dtype tf32 is not modelled");
  EXPECT_EQ(run_lumos("cost attention --batch 1 --heads 8 --seq 4096 --dtype fp16").exit_code, 0);
}

// Row 23: --nic-gbps 400 meant 400 GB/s, an 8x too fast network for a 400 Gb/s NIC.
TEST(Ranges, NicBandwidthTakesUnitsAnd400GbpsIs50GBps) {
  const std::string base = "cost collective --bytes 1GiB --ranks 64 --algo ring --json ";
  const auto gbps = run_lumos(base + "--nic-bandwidth 400Gbps");
  const auto gbs = run_lumos(base + "--nic-bandwidth 50GB/s");
  const auto gbit = run_lumos(base + "--nic-bandwidth 400Gb/s");
  const auto legacy = run_lumos(base + "--nic-gbps 400");
  const auto fast = run_lumos(base + "--nic-bandwidth 400GB/s");
  for (const auto* r : {&gbps, &gbs, &gbit, &legacy, &fast}) ASSERT_EQ(r->exit_code, 0) << r->out;
  EXPECT_EQ(gbps.out, gbs.out);
  EXPECT_EQ(gbps.out, gbit.out);
  EXPECT_EQ(gbps.out, legacy.out);  // --nic-gbps is gigabits per second, as its name says
  EXPECT_NE(gbps.out, fast.out);
  expect_one_line_exit_1(base + "--nic-bandwidth 400", "--nic-bandwidth: the unit is missing");
  expect_one_line_exit_1(base + "--nic-bandwidth 400Gbits", "unknown unit 'Gbits'");
  expect_one_line_exit_1(base + "--nic-bandwidth 1e30Gbps", "is out of range");
  expect_one_line_exit_1(base + "--nic-gbps 0", "NIC line rate must be between");
  expect_one_line_exit_1(base + "--nic-gbps 400 --nic-bandwidth 50GB/s", "not both");
}

// Row 15: --slow-rank 0:1e308 replayed infinite times (printed as null), --skew 0:-1e308 zero.
TEST(Ranges, StragglerFactorsAndSkewsHaveSaneRanges) {
  TempDir tmp;
  write_two_ranks(tmp);
  const std::string base = "replay " + tmp.path();
  expect_one_line_exit_1(base + " --slow-rank 0:1e308",
                         "--slow-rank: the factor must be between 0.001 and 1000");
  expect_one_line_exit_1(base + " --slow-rank 0:1e-9", "between 0.001 and 1000");
  expect_one_line_exit_1(base + " --slow-rank 0:-2", "between 0.001 and 1000");
  expect_one_line_exit_1(base + " --skew 0:1e308", "--skew: the skew must be within +-1e9 us");
  expect_one_line_exit_1(base + " --skew 0:-1e308", "--skew: the skew must be within +-1e9 us");
  EXPECT_EQ(run_lumos(base + " --slow-rank 0:1000 --skew 1:-1e9").exit_code, 0);
  // One value per rank: two would compound (2 x 3) without anyone having asked for 6.
  expect_one_line_exit_1(base + " --slow-rank 1:2 --slow-rank 1:3",
                         "--slow-rank: rank 1 given twice (one value per rank)");
  expect_one_line_exit_1(base + " --skew 0:5 --skew 0:5", "--skew: rank 0 given twice");
  EXPECT_EQ(run_lumos(base + " --slow-rank 0:2 --slow-rank 1:3").exit_code, 0);
}

// Rows 19 and 20: --speed factors that are not finite or far out of range, and an empty spec.
TEST(Ranges, SpeedFactorsMustBeFiniteAndInRange) {
  expect_one_line_exit_1("replay --speed compute=inf", "out of range");
  expect_one_line_exit_1("replay --speed compute=1e39", "out of range");
  expect_one_line_exit_1("replay --speed compute=1e-50", "out of range");
  const auto r = run_lumos("whatif --speed ';;'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

// Row 21: kernels that start a second before their launch call replayed with no word about it.
TEST(Ranges, KernelsStartingBeforeTheirLaunchCallAreWarnedAbout) {
  TempDir tmp;
  lumos::trace::KinetoWriter w;
  w.annotation(1, "ProfilerStep#1", 1000000, 2000);
  for (int i = 0; i < 3; ++i)  // each launch call at 1 s + ..., its kernel at ...: 1 s earlier
    w.launch(1, "cudaLaunchKernel", 1000010 + 100 * i, 5, "kernel", "gemm", 0, 7, 20 + 100 * i, 50);
  tmp.write("skewed.json", w.json());
  for (const std::string cmd : {"replay ", "whatif "}) {
    const auto r = run_lumos(cmd + tmp.file("skewed.json"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("warning: 3 GPU ops start before their launch call (up to 999990 us)"),
              std::string::npos)
        << r.out;
  }
  const auto clean = run_lumos("replay");  // the demo trace: consistent clocks, no warning
  EXPECT_EQ(clean.exit_code, 0) << clean.out;
  EXPECT_EQ(clean.out.find("warning"), std::string::npos) << clean.out;
}
