// The replay is a model, not a recording: halving GPU kernels shortens a GPU-bound step and
// leaves a CPU-bound one alone, by amounts computed by hand; the event-driven reference replay
// equals an independent longest-path computation on random DAGs; transplant works end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/error.hpp"
#include "graph/flatten.hpp"
#include "replay/critical_path.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "support/graph_test_util.hpp"
#include "trace/demo_trace.hpp"
#include "whatif/transplant.hpp"

using lumos::graph::Graph;
using lumos::graph::NodeClass;
using lumos::replay::reference_replay;
using lumos::replay::step_times;
using lumos::testing::build;
using lumos::trace::KinetoWriter;

namespace {

// Step time after scaling every kernel's duration by `factor`.
double step_with_kernels_scaled(const Graph& g, double factor) {
  std::vector<double> dur = g.dur_us;
  for (lumos::graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.cls[v] == NodeClass::kCompute || g.cls[v] == NodeClass::kComm) dur[v] *= factor;
  const auto r = reference_replay(g, &dur);
  return step_times(g, r).at(0).replayed_us;
}

}  // namespace

// Five 100 us kernels launched every 10 us, then loss.item() waits for them.
TEST(ReplaySemantics, HalvingKernelsShortensAGpuBoundStepByHalfTheirWork) {
  KinetoWriter w;
  for (int i = 0; i < 5; ++i)
    w.launch(1, "cudaLaunchKernel", 10.0 * i + 1, 5, "kernel", "gemm", 0, 7,
             i == 0 ? 10.0 : 10.0 + 100 * i, 100);
  // Kernels end at 510; the sync returns 2 us later; one more op follows.
  const int64_t corr = w.runtime(1, "cudaStreamSynchronize", 60, 452);
  w.sync("Stream Sync", corr, 0, 7, 60, 452);
  w.cpu_op(1, "aten::item", 515, 5);
  w.annotation(1, "ProfilerStep#1", 0, 520);
  const auto b = build(w);
  const double measured = b.g().steps[0].measured_us;
  EXPECT_DOUBLE_EQ(measured, 520.0);
  EXPECT_DOUBLE_EQ(step_with_kernels_scaled(b.g(), 1.0), 520.0);
  // 500 us of back-to-back kernels become 250 us; everything after the sync moves by 250 us.
  EXPECT_DOUBLE_EQ(step_with_kernels_scaled(b.g(), 0.5), 270.0);
}

// Kernels of 5 us launched by 100 us operators: the GPU idles; the CPU sets the pace.
TEST(ReplaySemantics, HalvingKernelsLeavesACpuBoundStepUnchanged) {
  KinetoWriter w;
  for (int i = 0; i < 5; ++i) {
    w.cpu_op(1, "aten::add", 100.0 * i, 100);
    w.launch(1, "cudaLaunchKernel", 100.0 * i + 50, 5, "kernel", "add", 0, 7, 100.0 * i + 58, 5);
  }
  const int64_t corr = w.runtime(1, "cudaStreamSynchronize", 500, 3);
  w.sync("Stream Sync", corr, 0, 7, 500, 3);
  w.annotation(1, "ProfilerStep#1", 0, 503);
  const auto b = build(w);
  EXPECT_DOUBLE_EQ(step_with_kernels_scaled(b.g(), 1.0), 503.0);
  EXPECT_DOUBLE_EQ(step_with_kernels_scaled(b.g(), 0.5), 503.0);
}

// An independent longest path: relax every edge in topological order (no processors, no queue).
std::vector<double> longest_path_starts(const Graph& g) {
  std::vector<double> start(g.num_nodes(), -INFINITY);
  start[0] = 0;
  for (lumos::graph::NodeId v = 1; v < g.num_nodes(); ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
      start[v] =
          std::max(start[v], start[g.pred_index[e]] + g.dur_us[g.pred_index[e]] + g.pred_lag_us[e]);
  return start;
}

TEST(ReplaySemantics, EventDrivenReplayEqualsLongestPathOnRandomDags) {
  std::mt19937_64 rng(20261129);
  for (int trial = 0; trial < 300; ++trial) {
    lumos::graph::Draft d;
    const int n = 2 + static_cast<int>(rng() % 200);
    const int resources = 1 + static_cast<int>(rng() % 6);
    d.nodes.push_back({});
    std::vector<int> last_on(resources, -1);
    for (int v = 1; v < n; ++v) {
      lumos::graph::DraftNode dn;
      dn.kind = lumos::graph::NodeKind::kKernel;
      dn.cls = NodeClass::kCompute;
      dn.resource = static_cast<uint32_t>(rng() % resources);
      dn.dur_us = static_cast<double>(rng() % 1000) / 10.0;
      d.nodes.push_back(dn);
      // A serial processor is a chain; plus up to three random earlier predecessors.
      const int r = static_cast<int>(dn.resource);
      d.edges.push_back({static_cast<uint32_t>(last_on[r] < 0 ? 0 : last_on[r]),
                         static_cast<uint32_t>(v), lumos::graph::EdgeKind::kIntraStream,
                         static_cast<double>(rng() % 50) / 10.0});
      last_on[r] = v;
      for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
        const auto p = static_cast<uint32_t>(rng() % v);
        d.edges.push_back({p, static_cast<uint32_t>(v), lumos::graph::EdgeKind::kLaunch,
                           static_cast<double>(static_cast<int>(rng() % 200) - 50) / 10.0});
      }
    }
    std::vector<lumos::graph::NodeId> id;
    Graph g = lumos::graph::flatten(
        d, &id, [](uint32_t) { return std::string("n"); }, "random");
    g.resources.resize(resources);
    g.names = {"n"};
    const auto r = reference_replay(g);
    const auto lp = longest_path_starts(g);
    for (lumos::graph::NodeId v = 0; v < g.num_nodes(); ++v)
      ASSERT_NEAR(r.start_us[v], lp[v], 1e-9 * std::max(1.0, std::fabs(lp[v])))
          << "trial " << trial << " node " << v;
  }
}

TEST(Transplant, IdenticalStepsPredictEachOtherExactly) {
  const std::string json = lumos::trace::demo_trace_json();
  const auto t = lumos::trace::parse_trace_bytes(json.data(), json.size(), "demo");
  const auto tr = lumos::whatif::transplant(t, 1, 2);
  EXPECT_EQ(tr.from, "ProfilerStep#1");
  EXPECT_EQ(tr.to, "ProfilerStep#2");
  EXPECT_DOUBLE_EQ(tr.matched_fraction, 1.0);
  EXPECT_NEAR(tr.error_pct, 0.0, 1e-9);
  EXPECT_NEAR(tr.predicted_us, tr.measured_us, 1e-6);
}

TEST(Transplant, SlowerKernelsInTheTargetStepLengthenThePrediction) {
  // Step 2's GEMMs take longer: the prediction from step 1's graph must follow them.
  KinetoWriter w;
  double t = 0;
  for (int step = 1; step <= 2; ++step) {
    const double k = step == 1 ? 100 : 130;
    const double s0 = t;
    for (int i = 0; i < 4; ++i)
      w.launch(1, "cudaLaunchKernel", s0 + 1 + 10 * i, 5, "kernel", "gemm", 0, 7, s0 + 10 + k * i,
               k);
    const double gpu_end = s0 + 10 + 4 * k;
    const int64_t corr = w.runtime(1, "cudaStreamSynchronize", s0 + 50, gpu_end + 2 - (s0 + 50));
    w.sync("Stream Sync", corr, 0, 7, s0 + 50, gpu_end + 2 - (s0 + 50));
    w.annotation(1, "ProfilerStep#" + std::to_string(step), s0, gpu_end + 2 - s0);
    t = gpu_end + 10;
  }
  const std::string json = w.json();
  const auto table = lumos::trace::parse_trace_bytes(json.data(), json.size(), "two-steps");
  const auto tr = lumos::whatif::transplant(table, 1, 2);
  EXPECT_DOUBLE_EQ(tr.measured_us, 532.0);
  EXPECT_DOUBLE_EQ(tr.naive_us, 412.0);
  EXPECT_NEAR(tr.predicted_us, 532.0, 1e-6);
}

namespace {

// Two steps of `kernels[s]` GEMM launches on stream 7 each; step 2 also runs `extra_stream`
// kernels on stream 9 when it is positive.
lumos::trace::EventTable steps_with_kernels(int k1, int k2, int extra_stream) {
  KinetoWriter w;
  double t = 0;
  for (int step = 1; step <= 2; ++step) {
    const double s0 = t;
    const int n = step == 1 ? k1 : k2;
    for (int i = 0; i < n; ++i)
      w.launch(1, "cudaLaunchKernel", s0 + 1 + 10 * i, 5, "kernel", "gemm", 0, 7, s0 + 10 + 100 * i,
               100);
    double gpu_end = s0 + 10 + 100 * n;
    if (step == 2)
      for (int i = 0; i < extra_stream; ++i) {
        w.launch(1, "cudaLaunchKernel", s0 + 1 + 10 * (n + i), 5, "kernel", "side", 0, 9,
                 s0 + 10 + 50 * i, 40);
        gpu_end = std::max(gpu_end, s0 + 10 + 50 * i + 40);
      }
    const int64_t corr = w.runtime(1, "cudaDeviceSynchronize", s0 + 200, gpu_end + 2 - (s0 + 200));
    w.sync("Context Sync", corr, 0, 7, s0 + 200, gpu_end + 2 - (s0 + 200));
    w.annotation(1, "ProfilerStep#" + std::to_string(step), s0, gpu_end + 2 - s0);
    t = gpu_end + 10;
  }
  const std::string json = w.json();
  return lumos::trace::parse_trace_bytes(json.data(), json.size(), "steps");
}

}  // namespace

TEST(Transplant, WorkOnlyTheSourceStepRanTakesNoTimeAndIsReported) {
  const auto tr = lumos::whatif::transplant(steps_with_kernels(8, 4, 0), 1, 2);
  EXPECT_LT(tr.matched_fraction, lumos::whatif::kStructureThreshold);
  EXPECT_DOUBLE_EQ(tr.covered_fraction, 1.0);
  // Step 1's four extra GEMMs would add 400 us if they kept their durations.
  EXPECT_NEAR(tr.predicted_us, tr.measured_us, 0.05 * tr.measured_us);
  ASSERT_FALSE(tr.differences.empty());
  EXPECT_NE(tr.differences[0].find("stream 0/7"), std::string::npos) << tr.differences[0];
  EXPECT_NE(lumos::whatif::structure_warning(tr).find("differ in structure"), std::string::npos);
}

TEST(Transplant, AStreamOnlyTheTargetStepRunsIsNamed) {
  const auto tr = lumos::whatif::transplant(steps_with_kernels(4, 4, 6), 1, 2);
  EXPECT_DOUBLE_EQ(tr.matched_fraction, 1.0);
  EXPECT_LT(tr.covered_fraction, lumos::whatif::kStructureThreshold);
  bool named = false;
  for (const auto& d : tr.differences)
    named |= d.find("stream 0/9: only in N") != std::string::npos;
  EXPECT_TRUE(named) << lumos::whatif::structure_warning(tr);
}

TEST(Transplant, MatchingStepsCarryNoWarning) {
  const auto tr = lumos::whatif::transplant(steps_with_kernels(4, 4, 0), 1, 2);
  EXPECT_DOUBLE_EQ(tr.matched_fraction, 1.0);
  EXPECT_DOUBLE_EQ(tr.covered_fraction, 1.0);
  EXPECT_TRUE(tr.differences.empty());
  EXPECT_EQ(lumos::whatif::structure_warning(tr), "");
}

TEST(Transplant, MissingStepIsAClearError) {
  const std::string json = lumos::trace::demo_trace_json();
  const auto t = lumos::trace::parse_trace_bytes(json.data(), json.size(), "demo");
  EXPECT_THROW(lumos::whatif::transplant(t, 1, 99), lumos::InputError);
}

TEST(CriticalPath, GpuBoundDemoPathRunsThroughTheKernels) {
  const std::string json = lumos::trace::demo_trace_json();
  const auto t = lumos::trace::parse_trace_bytes(json.data(), json.size(), "demo");
  const auto b = lumos::graph::build_graph(t);
  const auto r = reference_replay(b.graph);
  for (auto mode :
       {lumos::replay::CriticalPathMode::kHtaWeights, lumos::replay::CriticalPathMode::kTiming}) {
    const auto cp = lumos::replay::critical_path(b.graph, r, -1, mode);
    // The demo is GPU-bound: the path's GPU time covers nearly all of the replay.
    const double gpu = cp.by_class_us[static_cast<int>(NodeClass::kCompute)] +
                       cp.by_class_us[static_cast<int>(NodeClass::kComm)];
    EXPECT_GT(gpu, 0.95 * r.makespan_us);
    EXPECT_LE(cp.length_us, r.makespan_us + 1e-9);
  }
}
