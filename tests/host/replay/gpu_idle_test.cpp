// The GPU's idle split: each gap goes to what the op after it waited for, and the parts add up to
// the breakdown's idle time.
#include <gtest/gtest.h>

#include "graph/load_input.hpp"
#include "replay/gpu_idle.hpp"
#include "replay/rank_windows.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "replay/top_ops.hpp"
#include "support/graph_test_util.hpp"
#include "support/test_util.hpp"

namespace {

using lumos::replay::IdleSplit;
using lumos::trace::KinetoWriter;

double parts(const IdleSplit& s) {
  return s.host_us + s.sync_us + s.dependency_us + s.truly_idle_us;
}

IdleSplit whole_split(const lumos::graph::Graph& g, const lumos::replay::ReplayResult& r,
                      lumos::replay::Breakdown* b) {
  IdleSplit s;
  for (const auto& w : lumos::replay::rank_windows(g, r, lumos::replay::step_times(g, r))) {
    s += w.idle;
    *b += w.breakdown;
  }
  return s;
}

TEST(GpuIdleSplit, GapAfterASyncIsTheSyncsAndAGapBeforeALateLaunchIsTheHosts) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 10, "kernel", "k1", 0, 7, 15, 100);  // GPU busy to 115
  const int64_t corr = w.runtime(1, "cudaStreamSynchronize", 20, 98);     // returns at 118
  w.sync("Stream Sync", corr, 0, 7, 20, 98);
  w.launch(1, "cudaLaunchKernel", 130, 5, "kernel", "k2", 0, 7, 140, 20);  // idle 115..140
  w.cpu_op(1, "python", 136, 60);
  w.launch(1, "cudaLaunchKernel", 200, 5, "kernel", "k3", 0, 7, 210, 10);  // idle 160..210
  const auto b = lumos::testing::build(w);
  const auto r = lumos::replay::reference_replay(b.g());
  lumos::replay::Breakdown bd;
  const IdleSplit s = whole_split(b.g(), r, &bd);
  EXPECT_NEAR(s.sync_us, 25.0, 1e-9);  // the host could launch k2 only once k1 had drained
  EXPECT_GE(s.host_us, 50.0);          // k3 waited for its launch behind "python"
  EXPECT_LT(s.host_us, 50.0 + 15.0 + 1e-9);
  EXPECT_EQ(s.dependency_us, 0.0);
  EXPECT_NEAR(parts(s), s.idle_us, 1e-9);
  EXPECT_NEAR(s.idle_us, bd.other_us, 1e-9);
}

TEST(GpuIdleSplit, PartsAddUpToTheIdleTimeOnARealTrace) {
  LUMOS_REQUIRE_TRACES();
  const auto in = lumos::graph::load_input(lumos::testing::trace_dir() +
                                           "/kineto/resnet50_v100_legacy.pt.trace.json.gz");
  const auto r = lumos::replay::reference_replay(in.graph);
  lumos::replay::Breakdown bd;
  const IdleSplit s = whole_split(in.graph, r, &bd);
  // The traced GPU is idle for almost half of its windows, mostly waiting for the data loader.
  EXPECT_GT(s.idle_us, 0.4 * bd.window_us);
  EXPECT_NEAR(s.idle_us, bd.other_us, 1e-6 * bd.window_us);
  EXPECT_NEAR(parts(s), s.idle_us, 1e-6 * bd.window_us);
  EXPECT_GT(s.host_us, 0.9 * s.idle_us);  // one stream, no peers: launches hold it
  EXPECT_EQ(s.dependency_us, 0.0);
}

// A CPU a step ahead of its GPU: step 1's kernel still runs when step 2's annotation starts.
// Each window is cut where the next step begins, so the time the steps share counts once and the
// GPU is idle only where no kernel of either step runs.
TEST(StepWindows, StepsThatOverlapCountTheirSharedTimeOnce) {
  KinetoWriter w;
  w.annotation(1, "ProfilerStep#1", 0, 20);
  w.launch(1, "cudaLaunchKernel", 5, 5, "kernel", "k1", 0, 7, 10, 100);  // to 110
  w.annotation(1, "ProfilerStep#2", 20, 20);
  w.launch(1, "cudaLaunchKernel", 25, 5, "kernel", "k2", 0, 7, 110, 100);  // to 210
  const auto b = lumos::testing::build(w);
  const auto r = lumos::replay::reference_replay(b.g());
  const auto steps = lumos::replay::step_times(b.g(), r);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_NEAR(steps[0].replayed_us + steps[1].replayed_us, 110.0 + 190.0, 1e-9);  // latencies
  lumos::replay::Breakdown bd;
  const IdleSplit s = whole_split(b.g(), r, &bd);
  EXPECT_NEAR(bd.window_us, 210.0, 1e-9);  // the span the steps cover, not 300
  EXPECT_NEAR(s.idle_us, 10.0, 1e-9);      // only before k1 starts
  EXPECT_NEAR(bd.exposed_compute_us, 200.0, 1e-9);
}

// The same on a real trace whose CPU runs ~160 ms ahead of its GPU: the windows add up to the
// time the steps cover, and the GPU idles for that time less its busy time.
TEST(StepWindows, OverlappingStepsOfARealTraceAddUpToTheirSpan) {
  LUMOS_REQUIRE_TRACES();
  const auto in = lumos::graph::load_input(lumos::testing::trace_dir() +
                                           "/hta/negative_queue_length_values_check/rank0.json.gz");
  const auto& g = in.graph;
  const auto r = lumos::replay::reference_replay(g);
  const auto steps = lumos::replay::step_times(g, r);
  double first = 1e300, last = 0, latencies = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    const double begin = r.start_us[g.steps[k].marker];
    first = std::min(first, begin), last = std::max(last, begin + steps[k].replayed_us);
    latencies += steps[k].replayed_us;
  }
  lumos::replay::Breakdown bd;
  const IdleSplit s = whole_split(g, r, &bd);
  EXPECT_GT(latencies, 1.4 * (last - first));  // the steps overlap
  EXPECT_NEAR(bd.window_us, last - first, 1e-6 * bd.window_us);
  const double busy = bd.exposed_compute_us + bd.overlapped_us + bd.exposed_comm_us;
  EXPECT_NEAR(s.idle_us, bd.window_us - busy, 1e-6 * bd.window_us);
  EXPECT_NEAR(parts(s), s.idle_us, 1e-6 * bd.window_us);
}

TEST(TopOps, KernelsAreSummedByNameAndSortedByTime) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 5, "kernel", "short", 0, 7, 10, 10);
  w.launch(1, "cudaLaunchKernel", 6, 5, "kernel", "long", 0, 7, 20, 30);
  w.launch(1, "cudaLaunchKernel", 12, 5, "kernel", "short", 0, 7, 50, 25);
  const auto b = lumos::testing::build(w);
  const auto r = lumos::replay::reference_replay(b.g());
  const auto top = lumos::replay::top_ops(b.g(), r, lumos::replay::OpSide::kGpu, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].name, "short");
  EXPECT_NEAR(top[0].total_us, 35.0, 1e-9);
  EXPECT_EQ(top[0].count, 2u);
  EXPECT_EQ(top[1].name, "long");
  const auto cpu = lumos::replay::top_ops(b.g(), r, lumos::replay::OpSide::kCpu, 1);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].name, "cudaLaunchKernel");
  EXPECT_EQ(cpu[0].count, 3u);
}

}  // namespace
