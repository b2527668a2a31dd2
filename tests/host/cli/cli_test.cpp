// The `lumos` command end to end: the embedded default, JSON, timeline, ingest, transplant.
#include <gtest/gtest.h>

#include <simdjson.h>

#include "support/test_util.hpp"

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

TEST(Cli, ReplayWithNoInputReplaysTheEmbeddedDemo) {
  const auto r = run_lumos("replay");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("<embedded demo trace>"), std::string::npos);
  EXPECT_NE(r.out.find("ProfilerStep#3"), std::string::npos);
  EXPECT_NE(r.out.find("busy time per stream"), std::string::npos);
  EXPECT_NE(r.out.find("critical path"), std::string::npos);
}

TEST(Cli, JsonHasTheDocumentedShape) {
  const auto r = run_lumos("replay --json --from-step 1 --predict-step 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  const simdjson::dom::element d = p.parse(r.out);
  const auto steps = d["steps"].get_array();
  ASSERT_EQ(steps.size(), 3u);
  for (auto s : steps) {
    EXPECT_TRUE(s["name"].is_string());
    EXPECT_TRUE(s["rank"].is_int64());
    EXPECT_GT(s["measured_us"].get_double().value(), 0.0);
    EXPECT_NEAR(s["error_pct"].get_double().value(), 0.0, 1e-9);
    EXPECT_DOUBLE_EQ(s["replayed_us"].get_double().value(), s["measured_us"].get_double().value());
  }
  const auto bd = d["breakdown"];
  const double sum =
      bd["exposed_compute_us"].get_double().value() + bd["overlapped_us"].get_double().value() +
      bd["exposed_comm_us"].get_double().value() + bd["other_us"].get_double().value();
  EXPECT_NEAR(sum, bd["window_us"].get_double().value(), 1e-6);
  EXPECT_GT(bd["exposed_comm_us"].get_double().value(), 0.0);  // the demo's all-reduce
  EXPECT_EQ(d["streams"].get_array().size(), 2u);
  const auto tp = d["transplant"];
  EXPECT_EQ(std::string_view(tp["from"].get_string().value()), "ProfilerStep#1");
  for (const char* k : {"predicted_us", "measured_us", "error_pct", "matched_fraction"})
    EXPECT_TRUE(tp[k].is_number()) << k;
}

TEST(Cli, TimelineIsChromeTraceJson) {
  TempDir tmp;
  const auto r = run_lumos("replay --timeline " + tmp.file("tl.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  const simdjson::dom::element d = p.load(tmp.file("tl.json"));
  size_t complete = 0;
  for (auto e : d["traceEvents"].get_array()) {
    if (std::string_view(e["ph"].get_string().value()) != "X") continue;
    ++complete;
    EXPECT_GE(e["dur"].get_double().value(), 0.0);
  }
  EXPECT_GT(complete, 100u);
}

TEST(Cli, IngestedGraphReplaysLikeTheTrace) {
  TempDir tmp;
  ASSERT_EQ(run_lumos("demo-trace -o " + tmp.file("d.json")).exit_code, 0);
  const auto ing = run_lumos("ingest " + tmp.file("d.json") + " -o " + tmp.file("d.lgraph"));
  ASSERT_EQ(ing.exit_code, 0) << ing.out;
  const auto a = run_lumos("replay " + tmp.file("d.json") + " --json");
  const auto b = run_lumos("replay " + tmp.file("d.lgraph") + " --json");
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0) << b.out;
  simdjson::dom::parser p1, p2;
  const auto da = p1.parse(a.out), db = p2.parse(b.out);
  EXPECT_EQ(simdjson::minify(da["steps"]), simdjson::minify(db["steps"]));
  EXPECT_EQ(simdjson::minify(da["breakdown"]), simdjson::minify(db["breakdown"]));
  // Transplant needs the trace; the graph file says so clearly.
  const auto t = run_lumos("replay " + tmp.file("d.lgraph") + " --from-step 1 --predict-step 2");
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.out.find("needs the trace itself"), std::string::npos);
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* c : {"replay", "ingest", "demo-trace"}) {
    const auto r = run_lumos(std::string(c) + " --help");
    EXPECT_EQ(r.exit_code, 0) << c;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << c << ": " << r.out;
  }
  EXPECT_EQ(run_lumos("info").exit_code, 0);
  EXPECT_EQ(run_lumos("--help").exit_code, 0);
}
