// Caps are checked before the work they bound: a sweep's configurations counted from its axes,
// its names checked before any expansion, a placement's jobs and servers counted from the files,
// a benchmark's nodes x variants, and `generate`'s output size estimated from the graph's count.
// Each is refused in one line with exit code 1 well inside a second or two, where the command
// used to allocate for seconds, run out of memory or write gigabytes first.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

// Generous for a loaded machine: the refusals themselves take tens of milliseconds, and the
// work they replace took 6 s to minutes.
constexpr double kQuickS = 2.0;

struct Timed {
  lumos::testing::RunResult r;
  double seconds = 0;
};

Timed run_timed(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Timed t;
  // A limit well above kQuickS: a command that does the work fails here instead of hanging.
  t.r = run_lumos(args, 60);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

void expect_quick_refusal(const std::string& args, const std::string& needle) {
  const Timed t = run_timed(args);
  EXPECT_EQ(t.r.exit_code, 1) << args << "\n" << t.r.out;
  EXPECT_NE(t.r.out.find(needle), std::string::npos) << args << "\n" << t.r.out;
  EXPECT_EQ(std::count(t.r.out.begin(), t.r.out.end(), '\n'), 1) << args << "\n" << t.r.out;
  EXPECT_LT(t.seconds, kQuickS) << args << "\n" << t.r.out;
}

}  // namespace

// 4096 x 16 x 256 = 16.7 M configurations used to be expanded until bad_alloc (exit 2, 6-8 s).
TEST(CapsBeforeWork, SweepAboveTheConfigurationCapIsRefusedFromItsAxes) {
  expect_quick_refusal("sweep --dp 1 --tp 1:4096:1 --pp 1:16:1 --gbs 1:256:1 --gpu h100",
                       "16777216 configurations; at most 10000000");
}

// With GPU totals only the layouts that divide a total count; the loop stops past the cap.
TEST(CapsBeforeWork, SweepWithGpuTotalsAboveTheCapIsRefusedBeforeExpanding) {
  expect_quick_refusal("sweep --gpus 1:4096:1 --tp 1:64:1 --pp 1:64:1 --gbs 1:4096:1",
                       "more than 10000000 configurations");
}

// 10 M configurations (under the cap) with an unknown GPU: the name is checked first.
TEST(CapsBeforeWork, SweepUnknownGpuIsRefusedBeforeExpanding) {
  expect_quick_refusal("sweep --dp 1 --tp 1:4000:1 --pp 1:50:1 --gbs 1:50:1 --gpu no-such-gpu",
                       "unknown GPU 'no-such-gpu'");
}

TEST(CapsBeforeWork, SweepUnknownRegionAndStackAreRefusedBeforeExpanding) {
  expect_quick_refusal("sweep --dp 1 --tp 1:4000:1 --pp 1:50:1 --gbs 1:50:1 --region nowhere",
                       "nowhere");
  expect_quick_refusal("sweep --dp 1 --tp 1:4000:1 --pp 1:50:1 --gbs 1:50:1 --stack no-stack",
                       "no-stack");
}

// 40 job tables of 10^6 jobs each used to be built (40 M jobs) before anything was placed.
TEST(CapsBeforeWork, PlaceJobsFileAboveTheJobCapIsRefusedWhileReading) {
  TempDir tmp;
  std::string jobs;
  for (int i = 0; i < 40; ++i)
    jobs += "[[job]]\nname = \"j" + std::to_string(i) +
            "\"\ncount = 1000000\nscore = 1000\nhours = 1\n\n";
  const std::string path = tmp.write("jobs.toml", jobs);
  expect_quick_refusal(
      "place " + std::string(LUMOS_EXAMPLES_DIR) + "/fleets/two-servers.toml --jobs " + path,
      "jobs; at most 1000000 are placed at once");
}

// 2,000 server types of 10^6 servers: 2 x 10^9 servers, and at a small job score billions of
// jobs to place.
TEST(CapsBeforeWork, PlaceFleetAboveTheServerCapIsRefusedWhileReading) {
  TempDir tmp;
  std::string fleet = "[fleet]\nname = \"big\"\ngrid_g_per_kwh = 100\n\n";
  for (int i = 0; i < 2000; ++i)
    fleet += "[[server]]\nname = \"s" + std::to_string(i) +
             "\"\ncount = 1000000\nresources = 8\nscore = 1000\nmax_w = 300\nembodied_kg = "
             "1000\nage_y = 1\n\n";
  const std::string path = tmp.write("fleet.toml", fleet);
  expect_quick_refusal("place " + path + " --utilization 0:1:0.5 --job-score 1",
                       "servers over all its types");
}

// A fleet under the server cap can still ask for too many jobs: estimated before building any.
TEST(CapsBeforeWork, PlaceUtilizationAboveTheJobCapIsRefusedBeforeBuildingJobs) {
  TempDir tmp;
  const std::string path = tmp.write("fleet.toml",
                                     "[fleet]\nname = \"f\"\ngrid_g_per_kwh = 100\n\n[[server]]\n"
                                     "name = \"s\"\ncount = 1000000\nresources = 8\nscore = "
                                     "1000\nmax_w = 300\nembodied_kg = 1000\nage_y = 1\n");
  expect_quick_refusal("place " + path + " --utilization 0:1:0.5 --job-score 1",
                       "at most 1000000 are placed at once");
}

TEST(CapsBeforeWork, BenchBatchNodeVariantsAboveTheCapAreRefusedBeforeTheGraph) {
  expect_quick_refusal("bench batch --nodes 10000000 --variants 10000 --backend cpu",
                       "node-variants per launch; at most 50000000000");
  expect_quick_refusal("bench batch --nodes 4000000000 --variants 1 --backend cpu",
                       "--nodes must be between 2 and 20000000");
}

// A legal PP 128 layout used to write gigabytes for minutes; its size is now estimated from
// the graph's node count before anything is built or written, and nothing is left behind.
TEST(CapsBeforeWork, GenerateAboveTheDefaultOutputCapWritesNothing) {
  TempDir tmp;
  const std::string out = tmp.file("traces");
  expect_quick_refusal(
      "generate --model gpt3-175b --layers 128 --tp 1 --pp 128 --dp 1 --gbs 1024 "
      "-o " +
          out,
      "--max-output-bytes 2 GiB");
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(CapsBeforeWork, GenerateHonoursAnExplicitOutputCap) {
  TempDir tmp;
  const std::string layout = "generate --model gpt3-15b --layers 8 --tp 2 --pp 2 --dp 1 --gbs 8 ";
  expect_quick_refusal(layout + "--max-output-bytes 64KiB -o " + tmp.file("small"),
                       "--max-output-bytes 64 KiB");
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
  expect_quick_refusal(layout + "--max-output-bytes lots -o " + tmp.file("small"),
                       "--max-output-bytes");
  // The same layout under a cap it fits: written, and no larger than the cap.
  const auto r = run_lumos(layout + "--max-output-bytes 64MiB -o " + tmp.file("ok"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  uintmax_t bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.file("ok")))
    bytes += std::filesystem::file_size(e.path());
  EXPECT_GT(bytes, 0u);
  EXPECT_LT(bytes, 64u << 20);
}
