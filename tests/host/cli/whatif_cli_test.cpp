// `lumos whatif` and `lumos bench batch` through the command: the grid, its CSV and JSON, GEMM
// repricing on every backend, generated traces as full citizens of the trace path.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <filesystem>
#include <fstream>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;

TEST(BatchCli, BenchPrintsThroughputAndTheReferenceRatio) {
  const auto r = run_lumos("bench batch --nodes 3000 --variants 64 --backend cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* k : {"\"node_variants_per_s\"", "\"bytes_per_s\"", "\"vs_reference\"",
                        "\"max_live\"", "\"cuda_projection\"", "\"issue_bound\""})
    EXPECT_NE(r.out.find(k), std::string::npos) << k;
  const auto w = run_lumos("replay --backend cpu --speed compute=2 --json");
  ASSERT_EQ(w.exit_code, 0) << w.out;
  EXPECT_NE(w.out.find("\"backend\":\"cpu\""), std::string::npos);
  EXPECT_NE(w.out.find("\"replayed_us\":2037"), std::string::npos) << w.out;  // 3147 - 2220/2
  EXPECT_EQ(run_lumos("replay --speed compute=0").exit_code, 1);
  EXPECT_EQ(run_lumos("replay --backend gpu").exit_code, 1);
}

TEST(WhatifCli, GridOfGpusAndSpeedUpsWithAParetoFront) {
  lumos::testing::TempDir tmp;
  const auto r = run_lumos("whatif --gpus a100,h100,b200 --speed 'comm=1,2' --backend cpu --csv " +
                           tmp.file("w.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("6 variants"), std::string::npos) << r.out;
  std::ifstream in(tmp.file("w.csv"));
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "variant,replayed_us,energy_j,cp_compute_us,cp_comm_us,pareto");
  int rows = 0, front = 0;
  while (std::getline(in, line)) ++rows, front += line.back() == '1';
  EXPECT_EQ(rows, 6);
  EXPECT_GE(front, 1);
  EXPECT_EQ(run_lumos("whatif --gpus tpu").exit_code, 1);
  EXPECT_EQ(run_lumos("whatif --speed 'warp=2'").exit_code, 1);
}

// The same what-if on the reference and CPU backends gives the same numbers, GEMMs repriced
// on both (the CPU backend once ignored the pricing it announced).
TEST(WhatifCli, BackendsAgreeWithGemmsRepriced) {
  LUMOS_REQUIRE_TRACES();
  const std::string trace = lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz";
  std::vector<std::vector<double>> per_backend;
  for (const char* backend : {"reference", "cpu", "auto"}) {
    const auto r = run_lumos("whatif " + trace + " --gpus a100,h100,b200 --speed 'comm=1,2' " +
                             "--backend " + backend + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    simdjson::dom::parser parser;
    const simdjson::dom::element d = parser.parse(r.out);
    int64_t priced = 0;
    ASSERT_FALSE(d["gemm_kernels_priced"].get(priced)) << r.out;
    EXPECT_GT(priced, 50) << backend;
    std::vector<double> times;
    for (auto v : d["variants"].get_array()) times.push_back(v["replayed_us"].get_double().value());
    ASSERT_EQ(times.size(), 6u);
    per_backend.push_back(times);
  }
  for (size_t b = 1; b < per_backend.size(); ++b)
    for (size_t v = 0; v < 6; ++v)
      EXPECT_NEAR(per_backend[b][v], per_backend[0][v], 1e-6 * per_backend[0][v])
          << "backend " << b << " variant " << v;
}

// A trace written by `lumos generate` records each GEMM's operator shapes, so a what-if on it
// reprices its GEMMs like on a profiled trace.
TEST(WhatifCli, GeneratedTraceRepricesItsGemms) {
  lumos::testing::TempDir tmp;
  const auto g = run_lumos("generate --layers 4 --pp 1 --tp 2 --dp 1 --gbs 2 -o " + tmp.path());
  ASSERT_EQ(g.exit_code, 0) << g.out;
  const auto r = run_lumos("whatif " + tmp.path() + "/stage0.rank0.json --gpus h100,b200 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser parser;
  const simdjson::dom::element d = parser.parse(r.out);
  int64_t priced = 0;
  ASSERT_FALSE(d["gemm_kernels_priced"].get(priced));
  // 4 layers x 2 micro-batches x (4 forward + 8 backward GEMMs) plus the logits GEMMs.
  EXPECT_GE(priced, 4 * 2 * 12) << r.out;
  std::vector<double> t;
  for (auto v : d["variants"].get_array()) t.push_back(v["replayed_us"].get_double().value());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_LT(t[1], t[0]);  // a B200 is faster
}

// A trace moved to another GPU follows the model of that GPU: GEMMs by shape, attention at the
// GPU's matrix rate (the 500 W part's capped clock included), memory-bound kernels at its HBM
// bandwidth. On a generated single-GPU iteration the what-if equals `lumos estimate` on the
// target GPU to a small margin (kernel floors and per-architecture efficiencies aside); and a
// compute speed axis speeds up the priced kernels too.
TEST(WhatifCli, GeneratedTraceOnAnotherGpuFollowsTheModelOfThatGpu) {
  lumos::testing::TempDir tmp;
  const std::string cfg =
      "--model llama3-8b --layers 4 --tp 1 --pp 1 --dp 1 --gbs 2 --mbs 1 --stack torchtitan";
  ASSERT_EQ(run_lumos("generate " + cfg + " -o " + tmp.path()).exit_code, 0);
  const auto r = run_lumos("whatif " + tmp.path() + " --gpus h100-96gb-500w,b200 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser parser;
  const simdjson::dom::element d = parser.parse(r.out);
  std::vector<double> t;
  for (auto v : d["variants"].get_array()) t.push_back(v["replayed_us"].get_double().value());
  ASSERT_EQ(t.size(), 2u);
  const char* gpus[] = {"h100-96gb-500w", "b200"};
  for (int i = 0; i < 2; ++i) {
    const auto e = run_lumos("estimate --json " + cfg + " --gpu " + gpus[i]);
    ASSERT_EQ(e.exit_code, 0) << e.out;
    simdjson::dom::parser ep;
    const double model_us = ep.parse(e.out)["step_time_s"].get_double().value() * 1e6;
    EXPECT_NEAR(t[i], model_us, 0.02 * model_us) << gpus[i];
  }
  const auto s = run_lumos("whatif " + tmp.path() + " --speed compute=1,2 --json");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  simdjson::dom::parser sp;
  std::vector<double> u;
  for (auto v : sp.parse(s.out)["variants"].get_array())
    u.push_back(v["replayed_us"].get_double().value());
  ASSERT_EQ(u.size(), 2u);
  EXPECT_NEAR(u[1], u[0] / 2, 0.01 * u[0]);  // the step is GPU-bound: all of it halves
}

// A variant's result does not depend on the other GPUs of the grid: FP8 GEMMs stay priced when a
// GPU without FP8 (an A100, which runs them as BF16) joins. A graph file (no kernel shapes) moved
// to another GPU warns that only class ratios apply.
TEST(WhatifCli, AVariantIsPricedAloneAndAGraphFileWarns) {
  lumos::testing::TempDir tmp;
  ASSERT_EQ(run_lumos("generate --model llama3-8b --layers 2 --tp 1 --pp 1 --dp 1 --gbs 2 --mbs 1 "
                      "--dtype fp8 -o " +
                      tmp.file("g"))
                .exit_code,
            0);
  const std::string trace = tmp.file("g") + "/stage0.rank0.json";
  auto first_us = [](const std::string& out) {
    simdjson::dom::parser p;
    return p.parse(out)["variants"].at(0)["replayed_us"].get_double().value();
  };
  const auto alone = run_lumos("whatif " + trace + " --gpus h100-96gb-500w --json");
  const auto mixed = run_lumos("whatif " + trace + " --gpus h100-96gb-500w,a100 --json");
  ASSERT_EQ(alone.exit_code, 0) << alone.out;
  ASSERT_EQ(mixed.exit_code, 0) << mixed.out;
  EXPECT_DOUBLE_EQ(first_us(alone.out), first_us(mixed.out));
  ASSERT_EQ(run_lumos("ingest " + trace + " -o " + tmp.file("g.lgraph")).exit_code, 0);
  const auto w = run_lumos("whatif " + tmp.file("g.lgraph") + " --gpus a100");
  ASSERT_EQ(w.exit_code, 0) << w.out;
  EXPECT_NE(w.out.find("warning: "), std::string::npos) << w.out;
  const auto same = run_lumos("whatif " + tmp.file("g.lgraph") + " --gpus h100");
  EXPECT_EQ(same.out.find("warning: "), std::string::npos) << same.out;
}

TEST(WhatifCli, GeneratedUnfusedAttentionRepricesItsBatchedGemms) {
  lumos::testing::TempDir flash, unfused;
  ASSERT_EQ(
      run_lumos("generate --layers 4 --pp 1 --tp 2 --dp 1 --gbs 2 -o " + flash.path()).exit_code,
      0);
  ASSERT_EQ(run_lumos("generate --layers 4 --pp 1 --tp 2 --dp 1 --gbs 2 --stack megatron-2021 -o " +
                      unfused.path())
                .exit_code,
            0);
  auto priced = [](const std::string& dir) {
    const auto r = run_lumos("whatif " + dir + "/stage0.rank0.json --gpus h100,b200 --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    simdjson::dom::parser parser;
    int64_t n = -1;
    EXPECT_FALSE(parser.parse(r.out)["gemm_kernels_priced"].get(n)) << r.out;
    return n;
  };
  // The unfused attention adds 2 forward and 4 backward batched GEMMs per layer and micro-batch,
  // recorded as aten::bmm with their batch, so they are repriced too.
  EXPECT_EQ(priced(unfused.path()), priced(flash.path()) + 4 * 2 * 6);
}

TEST(WhatifCli, DescribeAndDpEditOfAGeneratedJob) {
  lumos::testing::TempDir tmp;
  const std::string job = tmp.file("job");
  ASSERT_EQ(run_lumos("generate --layers 8 --tp 2 --pp 2 --dp 4 --gbs 16 -o " + job).exit_code, 0);
  const auto d = run_lumos("whatif " + job + " --describe");
  ASSERT_EQ(d.exit_code, 0) << d.out;
  EXPECT_NE(d.out.find("degrees: tp 2, cp 1, dp 4, pp 2"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("repeated up to 4 times"), std::string::npos) << d.out;
  const auto dj = run_lumos("whatif " + job + " --describe --json");
  ASSERT_EQ(dj.exit_code, 0) << dj.out;
  simdjson::dom::parser parser;
  const simdjson::dom::element s = parser.parse(dj.out);
  EXPECT_EQ(s["dp"].get_int64().value(), 4);
  EXPECT_EQ(s["forward_layers"]["repeats"].get_int64().value(), 4);
  const auto e = run_lumos("whatif " + job + " --dp 8 --json");
  ASSERT_EQ(e.exit_code, 0) << e.out;
  simdjson::dom::parser p2;
  const simdjson::dom::element w = p2.parse(e.out);
  const double unedited = w["unedited_us"].get_double().value();
  const double edited = w["variants"].at(0)["replayed_us"].get_double().value();
  EXPECT_GT(edited, unedited) << "a data-parallel group across two nodes reduces slower";
  EXPECT_GE(w["edits"].get_array().size(), 2u);
  // GEMMs of every rank are repriced per GPU on a folder too.
  const auto gp = run_lumos("whatif " + job + " --gpus h100,b200 --json");
  ASSERT_EQ(gp.exit_code, 0) << gp.out;
  simdjson::dom::parser p3;
  const simdjson::dom::element gj = p3.parse(gp.out);
  EXPECT_GT(gj["gemm_kernels_priced"].get_int64().value(), 100);
  EXPECT_LT(gj["variants"].at(1)["replayed_us"].get_double().value(),
            gj["variants"].at(0)["replayed_us"].get_double().value());
  const auto n = run_lumos("whatif " + job + " --dp 8 --nic-bandwidth 400GB/s");
  ASSERT_EQ(n.exit_code, 0) << n.out;
  EXPECT_NE(n.out.find("with 400 GB/s NICs"), std::string::npos) << n.out;
}

TEST(WhatifCli, EditsWithoutTheStructureTheyNeedAreOneLine) {
  lumos::testing::TempDir tmp;
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif --dp 0"),
                                         "--dp must be between 1 and 65536 (got 0)");
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif --dp 4"), "has no message size");
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif --nic-bandwidth 400"),
                                         "--nic-bandwidth");
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif --topology nowhere --dp 2"), "nowhere");
}

TEST(WhatifCli, StructuralEditOfAGeneratedJobReportsAndEmitsTheEditedJob) {
  lumos::testing::TempDir tmp;
  const std::string job = tmp.file("job");
  ASSERT_EQ(run_lumos("generate --layers 8 --tp 2 --pp 2 --dp 1 --gbs 4 -o " + job).exit_code, 0);
  const auto r = run_lumos("whatif " + job + " --model gpt3-15b --pp 4 --gbs 8 --emit-traces " +
                           tmp.file("edited") + " --timeline " + tmp.file("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("traced    gpt3-15b, 8 layers: TP 2 x CP 1 x PP 2 x DP 1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("edits     pp 2 -> 4, gbs 4 -> 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layout    TP 2 x CP 1 x PP 4 x DP 1"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(tmp.file("t.json")));
  // The emitted job replays to the predicted step.
  const auto j = run_lumos("whatif " + job + " --model gpt3-15b --pp 4 --gbs 8 --json");
  ASSERT_EQ(j.exit_code, 0) << j.out;
  simdjson::dom::parser parser;
  const simdjson::dom::element d = parser.parse(j.out);
  const double predicted = d["trace_whatif"]["predicted_us"].get_double().value();
  EXPECT_NEAR(d["step_time_s"].get_double().value() * 1e6, predicted, 1e-6 * predicted);
  const auto back = run_lumos("replay " + tmp.file("edited") + " --json");
  ASSERT_EQ(back.exit_code, 0) << back.out;
  simdjson::dom::parser p2;
  double replayed = 0;
  for (auto s : p2.parse(back.out)["steps"].get_array())
    replayed = std::max(replayed, s["replayed_us"].get_double().value());
  EXPECT_NEAR(replayed, predicted, 1e-3 * predicted);
}

TEST(WhatifCli, StructuralEditsRefuseInOneLine) {
  lumos::testing::TempDir tmp;
  const std::string job = tmp.file("job");
  ASSERT_EQ(run_lumos("generate --layers 8 --tp 2 --pp 2 --dp 1 --gbs 4 -o " + job).exit_code, 0);
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif " + job + " --pp 4"),
                                         "needs the traced model's dimensions");
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif " + job + " --model gpt3-15b --pp 3"),
                                         "3");
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif " + job + " --model gpt3-15b --tp 5"),
                                         "heads");
  lumos::testing::expect_one_line_exit_1(
      run_lumos("whatif " + job + " --model gpt3-15b --pp 4 --gpus a100"),
      "a structural edit takes --gpu");
  lumos::testing::expect_one_line_exit_1(run_lumos("whatif " + job + " --emit-traces x"),
                                         "go with a structural edit");
}

TEST(WhatifCli, BenchTimesTheEditsOfAGeneratedJob) {
  const auto r = run_lumos("bench whatif --layers 8 --runs 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser parser;
  const simdjson::dom::element d = parser.parse(r.out);
  EXPECT_GT(d["traced_nodes"].get_uint64().value(), 10000u);
  EXPECT_GT(d["edited_nodes"].get_uint64().value(), 0u);
  for (const char* k : {"load_ms", "structural_edit_ms", "dp_edit_ms"})
    EXPECT_GT(d[k].get_double().value(), 0) << k;
  lumos::testing::expect_one_line_exit_1(run_lumos("bench whatif --layers 12"),
                                         "--layers must be a multiple of 8");
}

TEST(WhatifCli, AFolderOfTwoDifferentJobsIsOneLine) {
  lumos::testing::TempDir tmp;
  ASSERT_EQ(
      run_lumos("generate --layers 4 --tp 2 --pp 2 --dp 4 --gbs 8 -o " + tmp.file("a")).exit_code,
      0);
  ASSERT_EQ(
      run_lumos("generate --layers 4 --tp 1 --pp 2 --dp 1 --gbs 4 -o " + tmp.file("b")).exit_code,
      0);
  std::filesystem::copy(tmp.file("b") + "/stage1.rank1.json", tmp.file("a") + "/other.json");
  for (const char* edit : {" --describe", " --dp 8", " --model gpt3-15b --pp 4"})
    lumos::testing::expect_one_line_exit_1(run_lumos("whatif " + tmp.file("a") + edit), "world");
}

TEST(BatchCli, BenchOnATraceAndAGeneratedIterationReportsTheProgram) {
  for (const std::string graph : {std::string("generated:gpt3-15b"), std::string("")}) {
    lumos::testing::TempDir tmp;
    std::string spec = graph;
    if (spec.empty()) {  // the demo trace, through the same --graph path as any trace
      ASSERT_EQ(run_lumos("demo-trace -o " + tmp.file("d.json")).exit_code, 0);
      spec = tmp.file("d.json");
    }
    const auto r = run_lumos("bench batch --backend cpu --variants 16 --json --graph " + spec);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    simdjson::dom::parser parser;
    const simdjson::dom::element d = parser.parse(r.out);
    EXPECT_GT(d["max_live"].get_uint64().value(), 0u) << spec;
    EXPECT_LT(d["max_live"].get_uint64().value(), d["nodes"].get_uint64().value()) << spec;
    EXPECT_GT(d["node_variants_per_s"].get_double().value(), 0) << spec;
    // The working set that sized the CPU tile, within the program's registers.
    EXPECT_GE(d["hot_registers"].get_uint64().value(), 1u) << spec;
    EXPECT_LE(d["hot_registers"].get_uint64().value(), d["max_live"].get_uint64().value()) << spec;
    EXPECT_TRUE(d["cuda_projection"]["critical_path"].get_bool().value()) << spec;
  }
  // Finish times alone: the CPU run and the projected kernel both drop the path's composition.
  const auto f = run_lumos(
      "bench batch --backend cpu --variants 16 --json --no-path --graph generated:gpt3-15b");
  ASSERT_EQ(f.exit_code, 0) << f.out;
  simdjson::dom::parser parser;
  const simdjson::dom::element d = parser.parse(f.out);
  EXPECT_FALSE(d["critical_path"].get_bool().value());
  EXPECT_FALSE(d["cuda_projection"]["critical_path"].get_bool().value());
  EXPECT_GT(d["cuda_projection"]["issue_slots_per_node_variant"].get_double().value(),
            d["cuda_projection"]["instructions_per_node_variant"].get_double().value());
  lumos::testing::expect_one_line_exit_1(
      run_lumos("bench batch --backend cpu --graph generated:nomodel"), "nomodel");
}

}  // namespace
