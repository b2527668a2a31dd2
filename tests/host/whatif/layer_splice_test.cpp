// Layer edits on the traced graph (Lumos §4): duplicating or removing traced layer instances
// changes the replayed step by whole layers' worth of the traced critical path, leaves the graph
// valid, and an edit that asks for nothing leaves the step as traced.
#include "whatif/layer_splice.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <vector>

#include "common/error.hpp"
#include "graph/load_input.hpp"
#include "graph/multi_rank.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_writer.hpp"

using lumos::whatif::find_layer_stretches;
using lumos::whatif::splice_layers;

namespace {

// Each rank's first step, replayed; the slowest rank's (as `lumos whatif` reports the step).
double first_step_us(const lumos::graph::Graph& g) {
  std::map<int32_t, double> first;
  for (const auto& st : lumos::replay::step_times(g, lumos::replay::reference_replay(g)))
    first.emplace(st.rank, st.replayed_us);
  double us = 0;
  for (const auto& [rank, t] : first) us = std::max(us, t);
  return us;
}

// A two-rank tensor-parallel job of `layers` layers, written by hand: each layer a norm, a GEMM,
// an all-reduce and a second GEMM on the compute stream, launched from one thread with an 80 us
// CPU operator per layer (more than the layer's GPU time on rank 0: the CPU leads). Rank 1's
// first GEMM is slower, so rank 0 waits for it at every all-reduce.
void write_tp_job(const lumos::testing::TempDir& tmp, const std::string& dir, int layers) {
  std::filesystem::create_directories(tmp.file(dir));
  std::vector<lumos::trace::KinetoWriter> w(2);
  std::vector<double> gpu(2, 0);
  double c = 1;
  for (int l = 0; l < layers; ++l) {
    c += 80;  // the layer's CPU operator, then four launches 6 us apart
    double norm_at[2], gemm_at[2], ar_at[2], meet = 0;
    for (int r = 0; r < 2; ++r) {
      norm_at[r] = std::max(gpu[r], c + 5);
      gemm_at[r] = std::max(norm_at[r] + 10, c + 11);
      ar_at[r] = std::max(gemm_at[r] + (r == 0 ? 40 : 70), c + 17);
      meet = std::max(meet, ar_at[r]);
    }
    for (int r = 0; r < 2; ++r) {
      w[r].cpu_op(1, "layer.python", c - 80, 80);
      w[r].launch(1, "cudaLaunchKernel", c, 5, "kernel", "norm_kernel", 0, 7, norm_at[r], 10);
      w[r].launch(1, "cudaLaunchKernel", c + 6, 5, "kernel", "gemm_a", 0, 7, gemm_at[r],
                  r == 0 ? 40 : 70);
      w[r].launch(1, "cudaLaunchKernel", c + 12, 5, "kernel",
                  "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0, 7, ar_at[r],
                  meet + 20 - ar_at[r]);
      const double b_at = std::max(meet + 20, c + 23);
      w[r].launch(1, "cudaLaunchKernel", c + 18, 5, "kernel", "gemm_b", 0, 7, b_at, 50);
      gpu[r] = b_at + 50;
    }
    c += 30;
  }
  for (int r = 0; r < 2; ++r) {
    w[r].set_rank(r, 2);
    w[r].annotation(1, "ProfilerStep#1", 0, c + 5);
    tmp.write(dir + "/rank" + std::to_string(r) + ".json", w[r].json());
  }
}

std::string b200_trace() {
  return lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz";
}

}  // namespace

TEST(LayerSplice, FindsTheB200LayersAsABlockOfTwoRepeated18Times) {
  LUMOS_REQUIRE_TRACES();
  const auto in = lumos::graph::load_input(b200_trace());
  const auto stretches = find_layer_stretches(in.graph);
  ASSERT_FALSE(stretches.empty());
  // The describe output finds the same: 42 kernels (a sliding- and a full-attention layer)
  // repeated 18 times in the first forward pass.
  EXPECT_EQ(stretches.front().period, 42u);
  EXPECT_EQ(stretches.front().instances, 18u);
}

// Forward-only linearity: doubling the layers of a forward pass adds the traced per-layer time
// once per added layer. The per-layer time is measured on the trace itself: the median, over the
// pass, of the replayed time from one instance's first kernel to the next one's (the first
// instance also carries the pass's one-time CPU work: 10.7 ms against 3.7-4.0 ms).
TEST(LayerSplice, DoublingTheB200LayersAddsTheTracedPerLayerTime) {
  LUMOS_REQUIRE_TRACES();
  const auto in = lumos::graph::load_input(b200_trace());
  const auto& g = in.graph;
  const auto stretches = find_layer_stretches(g);
  ASSERT_EQ(stretches.size(), 1u);  // one step, one forward pass
  const auto& s = stretches.front();
  const auto r = lumos::replay::reference_replay(g);
  std::vector<double> per_layer_us;
  for (uint32_t i = 0; i + 1 < s.instances; ++i)
    per_layer_us.push_back(r.start_us[s.kernels[(i + 1) * s.period]] -
                           r.start_us[s.kernels[i * s.period]]);
  std::sort(per_layer_us.begin(), per_layer_us.end());
  const double median_us = per_layer_us[per_layer_us.size() / 2];
  const double before = first_step_us(g);
  const auto doubled = splice_layers(g, static_cast<int>(s.instances), "b200");
  lumos::graph::validate(doubled.graph, "doubled");
  EXPECT_EQ(doubled.instances_after, 2 * s.instances);
  const double after = first_step_us(doubled.graph);
  const double expected = s.instances * median_us;
  std::printf("B200: T(L) %.1f us, T(2L) %.1f us, T(2L)-T(L) %.1f us, L x per-layer %.1f us\n",
              before, after, after - before, expected);
  EXPECT_NEAR(after - before, expected, 0.02 * expected);
  // Removing half of them takes half of it off again.
  const auto halved = splice_layers(g, -static_cast<int>(s.instances / 2), "b200");
  lumos::graph::validate(halved.graph, "halved");
  const double half = first_step_us(halved.graph);
  std::printf("B200: T(L/2) %.1f us, T(L)-T(L/2) %.1f us\n", half, before - half);
  EXPECT_NEAR(before - half, expected / 2, 0.02 * expected / 2);
}

// Identity: an edit of zero instances replays every shared trace that has layers as traced.
// An edit of one instance more or fewer per pass leaves a valid graph that moves the step the
// right way.
TEST(LayerSplice, AnEditOfNothingReplaysEverySharedTraceAsTracedAndOneMoreLayerNoFaster) {
  LUMOS_REQUIRE_TRACES();
  int edited = 0;
  for (const auto& path : lumos::testing::shared_traces()) {
    lumos::graph::LoadedInput in;
    try {
      in = lumos::graph::load_input(path);
    } catch (const lumos::InputError&) {
      continue;  // traces the replay refuses are tested elsewhere
    }
    if (find_layer_stretches(in.graph).empty()) continue;
    const auto same = splice_layers(in.graph, 0, path);
    lumos::graph::validate(same.graph, path);
    const double traced = first_step_us(in.graph), edited_us = first_step_us(same.graph);
    EXPECT_NEAR(edited_us, traced, 1e-4 * traced) << path;
    // One instance more per pass is a valid graph that takes no less time; one fewer, where
    // every pass keeps one, none more.
    const auto more = splice_layers(in.graph, 1, path);
    lumos::graph::validate(more.graph, path);
    EXPECT_GE(first_step_us(more.graph), traced * (1 - 1e-9)) << path;
    uint32_t fewest = UINT32_MAX;
    for (const auto& s : find_layer_stretches(in.graph)) fewest = std::min(fewest, s.instances);
    if (fewest >= 2) {
      const auto fewer = splice_layers(in.graph, -1, path);
      lumos::graph::validate(fewer.graph, path);
      EXPECT_LE(first_step_us(fewer.graph), traced * (1 + 1e-9)) << path;
    }
    ++edited;
  }
  std::printf("%d shared traces have layers to edit\n", edited);
  EXPECT_GT(edited, 0);
}

// On a folder of ranks, the copies of a layer meet at copies of its all-reduce: the edit of the
// 4-layer job to 8 replays as the 8-layer job does, on every rank.
TEST(LayerSplice, TensorParallelRanksMeetAtTheCopiedCollectives) {
  lumos::testing::TempDir tmp;
  write_tp_job(tmp, "four", 4);
  write_tp_job(tmp, "eight", 8);
  write_tp_job(tmp, "two", 2);
  const auto four = lumos::graph::load_multi_rank(tmp.file("four"));
  const auto eight = lumos::graph::load_multi_rank(tmp.file("eight"));
  const auto two = lumos::graph::load_multi_rank(tmp.file("two"));
  const auto doubled = splice_layers(four.graph, 4, "four");
  lumos::graph::validate(doubled.graph, "doubled");
  EXPECT_EQ(doubled.stretches, 2u);  // one pass per rank
  EXPECT_EQ(doubled.instances_after, 16u);
  const auto halved = splice_layers(four.graph, -2, "four");
  lumos::graph::validate(halved.graph, "halved");
  const auto per_rank = [](const lumos::graph::Graph& g) {
    std::map<int32_t, double> out;
    for (const auto& st : lumos::replay::step_times(g, lumos::replay::reference_replay(g)))
      out.emplace(st.rank, st.replayed_us);
    return out;
  };
  const auto want8 = per_rank(eight.graph), got8 = per_rank(doubled.graph);
  const auto want2 = per_rank(two.graph), got2 = per_rank(halved.graph);
  for (int32_t r : {0, 1}) {
    std::printf("rank %d: 8 layers %.1f us, edited %.1f us; 2 layers %.1f us, edited %.1f us\n", r,
                want8.at(r), got8.at(r), want2.at(r), got2.at(r));
    EXPECT_NEAR(got8.at(r), want8.at(r), 0.01 * want8.at(r)) << "rank " << r;
    EXPECT_NEAR(got2.at(r), want2.at(r), 0.01 * want2.at(r)) << "rank " << r;
  }
}

TEST(LayerSplice, RefusesToRemoveEveryInstanceOfAPass) {
  LUMOS_REQUIRE_TRACES();
  const auto in = lumos::graph::load_input(b200_trace());
  try {
    splice_layers(in.graph, -18, "b200");
    FAIL() << "removing all 18 instances was accepted";
  } catch (const lumos::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("would leave none"), std::string::npos) << e.what();
  }
}
