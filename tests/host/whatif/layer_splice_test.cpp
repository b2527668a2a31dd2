// Layer edits on the traced graph (Lumos §4): duplicating or removing traced layer instances
// changes the replayed step by whole layers' worth of the traced critical path, leaves the graph
// valid, and an edit that asks for nothing leaves the step as traced.
#include "whatif/layer_splice.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "common/error.hpp"
#include "graph/load_input.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "support/test_util.hpp"

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
TEST(LayerSplice, AnEditOfNothingReplaysEverySharedTraceAsTraced) {
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
    ++edited;
  }
  EXPECT_GT(edited, 0);
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
