// BuildOptions::transplant_data: a build asked for transplant's match keys and resource-free
// edges builds exactly the same graph as one that is not, and only it carries them.
#include <gtest/gtest.h>

#include "graph/graph_builder.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"

using lumos::graph::BuildOptions;
using lumos::graph::BuildResult;
using lumos::graph::Graph;

namespace {

void expect_same_graph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.cls, b.cls);
  EXPECT_EQ(a.resource, b.resource);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.event, b.event);
  EXPECT_EQ(a.dur_us, b.dur_us);
  EXPECT_EQ(a.measured_start_us, b.measured_start_us);
  EXPECT_EQ(a.pred_offset, b.pred_offset);
  EXPECT_EQ(a.pred_index, b.pred_index);
  EXPECT_EQ(a.pred_lag_us, b.pred_lag_us);
  EXPECT_EQ(a.pred_kind, b.pred_kind);
  EXPECT_EQ(a.wave_offset, b.wave_offset);
  EXPECT_EQ(a.t0_ns, b.t0_ns);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t k = 0; k < a.steps.size(); ++k) {
    EXPECT_EQ(a.steps[k].marker, b.steps[k].marker);
    EXPECT_EQ(a.steps[k].measured_us, b.steps[k].measured_us);
  }
}

}  // namespace

TEST(TransplantData, BuiltOnlyWhenAskedAndLeavesTheGraphUnchanged) {
  LUMOS_REQUIRE_TRACES();
  const auto t = lumos::trace::load_trace(lumos::testing::trace_dir() +
                                          "/kineto/resnet50_v100_legacy.pt.trace.json.gz");
  for (int window : {-1, 0, 3}) {
    SCOPED_TRACE(window);
    BuildOptions plain, with;
    plain.window_step = with.window_step = window;
    with.transplant_data = true;
    const BuildResult a = lumos::graph::build_graph(t, plain);
    const BuildResult b = lumos::graph::build_graph(t, with);
    expect_same_graph(a.graph, b.graph);
    EXPECT_EQ(a.stats.launch_latency_us, b.stats.launch_latency_us);
    EXPECT_EQ(a.stats.kernel_gap_us, b.stats.kernel_gap_us);
    EXPECT_TRUE(a.keys.empty());
    EXPECT_TRUE(a.free_edges.empty());
    EXPECT_TRUE(a.resource_free.empty());
    EXPECT_EQ(b.keys.size(), b.graph.num_nodes());
    if (window >= 0) EXPECT_FALSE(b.resource_free.empty());
    if (window > 0) EXPECT_FALSE(b.free_edges.empty());  // backlog of the step before
  }
}
