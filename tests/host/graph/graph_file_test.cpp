// The .lgraph file round-trips exactly and rejects what is not a valid graph file.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.hpp"
#include "graph/graph_builder.hpp"
#include "graph/graph_file.hpp"
#include "replay/reference_replay.hpp"
#include "support/test_util.hpp"
#include "trace/demo_trace.hpp"
#include "trace/kineto_loader.hpp"

namespace {

lumos::graph::Graph demo_graph() {
  const std::string json = lumos::trace::demo_trace_json();
  const auto t = lumos::trace::parse_trace_bytes(json.data(), json.size(), "demo");
  return lumos::graph::build_graph(t).graph;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(GraphFile, RoundTripKeepsEveryArrayAndTheReplay) {
  lumos::testing::TempDir tmp;
  const auto g = demo_graph();
  lumos::graph::write_graph_file(g, tmp.file("demo.lgraph"));
  ASSERT_TRUE(lumos::graph::is_graph_file(tmp.file("demo.lgraph")));
  const auto h = lumos::graph::read_graph_file(tmp.file("demo.lgraph"));
  EXPECT_EQ(h.kind, g.kind);
  EXPECT_EQ(h.pred_offset, g.pred_offset);
  EXPECT_EQ(h.pred_index, g.pred_index);
  EXPECT_EQ(h.pred_lag_us, g.pred_lag_us);
  EXPECT_EQ(h.wave_offset, g.wave_offset);
  EXPECT_EQ(h.names, g.names);
  ASSERT_EQ(h.steps.size(), g.steps.size());
  EXPECT_EQ(h.steps[1].measured_us, g.steps[1].measured_us);
  EXPECT_EQ(lumos::replay::reference_replay(h).finish_us,
            lumos::replay::reference_replay(g).finish_us);
}

TEST(GraphFile, RejectsWrongMagicNewerVersionTruncationAndBrokenOrder) {
  lumos::testing::TempDir tmp;
  lumos::graph::write_graph_file(demo_graph(), tmp.file("g.lgraph"));
  const std::string good = slurp(tmp.file("g.lgraph"));
  auto expect_error = [&](const std::string& bytes, const std::string& needle) {
    const std::string p = tmp.write("bad.lgraph", bytes);
    try {
      lumos::graph::read_graph_file(p);
      ADD_FAILURE() << "accepted a bad file; expected: " << needle;
    } catch (const lumos::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("NOTAGRAPH-------", "bad magic");
  std::string v2 = good;
  v2[8] = 2;
  expect_error(v2, "version 2 is not supported");
  expect_error(good.substr(0, good.size() / 2), "corrupt graph file");
  // Point the first real edge at a later node: no longer topologically ordered.
  auto g = demo_graph();
  g.pred_index[0] = g.num_nodes() - 1;
  lumos::graph::write_graph_file(g, tmp.file("cyc.lgraph"));
  expect_error(slurp(tmp.file("cyc.lgraph")), "topological order");
}
