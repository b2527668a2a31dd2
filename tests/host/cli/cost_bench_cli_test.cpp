// `lumos cost` and `lumos bench` end to end: the text lines and JSON fields their renderers
// write, the kinds' errors, and the benchmarks' JSON shape.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "cost/kernels_db.hpp"
#include "report/cross_validation_report.hpp"
#include "support/test_util.hpp"

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

TEST(CostCli, TextLinesNameTheQueryAndTheGpu) {
  auto r = run_lumos("cost gemm --m 8192 --n 8192 --k 8192");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(starts_with(r.out, "gemm 8192x8192x8192 x1 bf16 on h100: ")) << r.out;
  r = run_lumos("cost attention --batch 2 --heads 32 --seq 4096 --causal --pass bwd");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(starts_with(r.out, "attention bwd b=2 h=32 s=4096 d=128 causal on h100: ")) << r.out;
  r = run_lumos("cost collective --op allreduce --bytes 1GiB --ranks 64");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(starts_with(r.out, "allreduce 1073741824 B over 64 ranks (8 per node) on h100 ["))
      << r.out;
  for (const char* kind :
       {"memory --bytes 64MiB", "optimizer --params 1e9", "memcpy --bytes 1GiB"}) {
    r = run_lumos(std::string("cost ") + kind + " --gpu h200");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string what = std::string(kind).substr(0, std::string(kind).find(' '));
    EXPECT_TRUE(starts_with(r.out, what + " on h200: ")) << r.out;
  }
  r = run_lumos("cost gpus");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(starts_with(r.out, "gpu    arch        SMs   bf16 TF")) << r.out;
  EXPECT_NE(r.out.find("\nh100 "), std::string::npos);
  // The list is every GPU, but a --gpu given is checked: a misspelt one exited 0.
  r = run_lumos("cost gpus --gpu foo");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("unknown GPU 'foo'"), std::string::npos) << r.out;
}

TEST(CostCli, JsonHasTheDocumentedFields) {
  simdjson::dom::parser p;
  auto r = run_lumos("cost gemm --m 4096 --n 1024 --k 512 --batch 3 --dtype fp8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::element d = p.parse(r.out);
  EXPECT_EQ(std::string_view(d["dtype"].get_string().value()), "fp8");
  EXPECT_EQ(d["batch"].get_int64().value(), 3);
  for (const char* k : {"time_us", "tflops"}) EXPECT_GT(d[k].get_double().value(), 0.0) << k;
  r = run_lumos("cost collective --op allgather --bytes 64MiB --ranks 16 --algo ring --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  d = p.parse(r.out);
  EXPECT_EQ(std::string_view(d["algorithm"].get_string().value()), "ring");
  for (const char* k : {"time_us", "latency_us", "algbw_gb_per_s", "busbw_gb_per_s"})
    EXPECT_GT(d[k].get_double().value(), 0.0) << k;
  r = run_lumos("cost memcpy --bytes 1MiB --direction d2d --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  d = p.parse(r.out);
  EXPECT_EQ(std::string_view(d["kind"].get_string().value()), "memcpy");
  EXPECT_GT(d["time_us"].get_double().value(), 0.0);
}

TEST(CostCli, ClassifyReportsClassesAsTextAndJson) {
  TempDir tmp;
  ASSERT_EQ(run_lumos("demo-trace -o " + tmp.file("demo.json")).exit_code, 0);
  auto r = run_lumos("cost classify " + tmp.file("demo.json") + " --verbose");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("classified (GPU: not in kernels_db, no predictions)"), std::string::npos);
  EXPECT_NE(r.out.find("\n  gemm "), std::string::npos) << r.out;
  r = run_lumos("cost classify " + tmp.file("demo.json") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  const simdjson::dom::element d = p.parse(r.out);
  EXPECT_EQ(std::string_view(d["gpu"].get_string().value()), "");
  EXPECT_GT(d["time_by_class_us"]["gemm"].get_double().value(), 0.0);
  EXPECT_DOUBLE_EQ(d["classified_fraction"].get_double().value(), 1.0);
  EXPECT_EQ(d["model_vs_measured"].get_object().size(), 0u);
}

TEST(CostCli, BadKindsAndFlagsAreInputErrors) {
  for (const char* args :
       {"cost", "cost bogus", "cost gemm --m 0 --n 1 --k 1", "cost gemm --n 1 --k 1",
        "cost attention --batch 1 --heads 1 --seq 1 "
        "--pass sideways",
        "cost attention --batch 1 --heads 1 --seq 1 --impl flash9", "cost collective --ranks 4",
        "cost collective --bytes 1 --ranks 4 "
        "--nic-efficiency 2",
        "cost optimizer", "cost memory", "cost classify"}) {
    const auto r = run_lumos(args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.out;
  }
  EXPECT_NE(run_lumos("cost gemm --n 1 --k 1").out.find("lumos cost: missing --m"),
            std::string::npos);
}

TEST(CostCli, AttentionImplementationPicksItsTable) {
  const auto cudnn = run_lumos("cost attention --batch 8 --heads 16 --seq 2048 --impl cudnn");
  const auto fa2 = run_lumos("cost attention --batch 8 --heads 16 --seq 2048 --impl flash2");
  const auto a100 = run_lumos("cost attention --batch 8 --heads 16 --seq 2048 --gpu a100");
  EXPECT_NE(cudnn.out.find("cudnn h100 fwd non-causal"), std::string::npos) << cudnn.out;
  EXPECT_NE(fa2.out.find("fa2 h100 fwd non-causal"), std::string::npos) << fa2.out;
  EXPECT_NE(a100.out.find("fa2 a100 fwd non-causal"), std::string::npos) << a100.out;
}

TEST(BenchCli, BatchJsonHasTheDocumentedShape) {
  const auto r = run_lumos("bench batch --nodes 2000 --variants 8 --backend cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  const simdjson::dom::element d = p.parse(r.out);
  EXPECT_EQ(std::string_view(d["backend"].get_string().value()), "cpu");
  EXPECT_EQ(d["nodes"].get_uint64().value(), 2000u);
  EXPECT_EQ(d["variants"].get_uint64().value(), 8u);
  for (const char* k :
       {"seconds_per_launch", "node_variants_per_s", "bytes_per_s", "reference_nodes_per_s",
        "vs_reference", "machine_copy_bytes_per_s", "fraction_of_copy_bandwidth"})
    EXPECT_GT(d[k].get_double().value(), 0.0) << k;
  EXPECT_EQ(run_lumos("bench batch --backend reference").exit_code, 1);
  // A chosen tile width is the one run and reported.
  const auto t = run_lumos("bench batch --nodes 2000 --variants 64 --backend cpu --tile 16 --json");
  ASSERT_EQ(t.exit_code, 0) << t.out;
  simdjson::dom::parser tp;
  EXPECT_EQ(tp.parse(t.out)["tile"].get_uint64().value(), 16u);
  EXPECT_EQ(run_lumos("bench batch --tile 5000").exit_code, 1);
}

TEST(BenchCli, EstimateRefusesAKernelsDbFolderThatIsNotOne) {
  lumos::testing::TempDir tmp;
  const auto r = run_lumos("bench estimate --runs 1 --db " + tmp.file("missing"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("missing"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("calibration:"), std::string::npos) << r.out;
}

TEST(BenchCli, EstimateJsonHasTheCalibrationAndTheLatency) {
  const auto r = run_lumos("bench estimate --runs 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  const simdjson::dom::element d = p.parse(r.out);
  size_t rows = 0;
  for (auto row : d["calibration"].get_array()) {
    ++rows;
    EXPECT_GT(row["published_step_s"].get_double().value(), 0.0);
    EXPECT_GT(row["step_time_s"].get_double().value(), 0.0);
    EXPECT_GT(row["lumos_tflops_per_gpu"].get_double().value(), 0.0);
    EXPECT_GT(row["published_tflops_per_gpu"].get_double().value(), 0.0);
    EXPECT_GT(row["breakdown"]["exposed_compute_us"].get_double().value(), 0.0);
    for (const char* k : {"overlapped_us", "exposed_comm_us", "bubble_us"})
      EXPECT_GE(row["breakdown"][k].get_double().value(), 0.0) << k;
    EXPECT_TRUE(row["fits"].is_bool());
    for (const char* k : {"label", "id", "tier", "gpu", "stack", "options", "source", "note"})
      EXPECT_TRUE(row[k].is_string());
  }
  EXPECT_EQ(rows, 48u);  // calibration.md's 5 H100 rows and the 43 of published-runs.json
  // Each row's `lumos estimate` flags reproduce its step time: a pipelined SC21 run (its DDP
  // reduces after the backward pass), BLOOM (own stack, topology, split embedding), torchtitan and
  // Nemotron-4 340B (its head dimension from hidden / heads, its recipe's gradient type, master
  // weights and attention kernels), and Llama 3.1 405B in FP8 (its script's bf16 gradients and
  // FP8 reduce-scatter buffers).
  size_t replayed = 0;
  for (auto row : d["calibration"].get_array()) {
    const std::string id(row["id"].get_string().value());
    if (id != "narayanan21_t1_39.1B" && id != "bloom176b_production_iter85376" &&
        id != "torchtitan_t1_8b_fsdp8" && id != "dgxc_nemotron4_340b_bf16_128gpu" &&
        id != "dgxc_llama31_405b_fp8_576gpu")
      continue;
    ++replayed;
    const std::string options(row["options"].get_string().value());
    if (id == "narayanan21_t1_39.1B")
      EXPECT_NE(options.find("--overlap-grad-reduce off"), std::string::npos) << options;
    if (id == "dgxc_nemotron4_340b_bf16_128gpu")
      EXPECT_NE(options.find("--attention flash2 --grad-reduce-in-fp32 off"), std::string::npos)
          << options;
    if (id == "dgxc_llama31_405b_fp8_576gpu")
      EXPECT_NE(options.find("--tp-comm-fp8-reduce-scatter"), std::string::npos) << options;
    const auto e = run_lumos("estimate --json " + options);
    ASSERT_EQ(e.exit_code, 0) << options << "\n" << e.out;
    simdjson::dom::parser ep;
    EXPECT_NEAR(ep.parse(e.out)["step_time_s"].get_double().value(),
                row["step_time_s"].get_double().value(), 1e-9)
        << options;
  }
  EXPECT_EQ(replayed, 5u);
  size_t groups = 0;
  for (auto g : d["groups"].get_array()) {
    ++groups;
    EXPECT_GT(g["runs"].get_int64().value(), 0);
    EXPECT_GE(g["max_abs_error_pct"].get_double().value(),
              g["mean_abs_error_pct"].get_double().value());
  }
  // nemo-2025, nemo-2024 (dgxc-benchmarking's NeMo 24.12 rows), megatron-2021, -deepspeed,
  // torchtitan on two GPUs, torchtitan-compile
  EXPECT_EQ(groups, 7u);
  const auto l = d["latency"];
  EXPECT_EQ(l["runs"].get_int64().value(), 1);
  EXPECT_LE(l["min_s"].get_double().value(), l["median_s"].get_double().value());
  EXPECT_LE(l["median_s"].get_double().value(), l["max_s"].get_double().value());
  EXPECT_GT(l["nodes"].get_uint64().value(), 0u);
  EXPECT_EQ(run_lumos("bench estimate --runs 0").exit_code, 1);
  const auto bad = run_lumos("bench estimate --runs 1 --write-residuals /nonexistent/dir/c.json");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;
}

// The residuals file `--write-residuals` writes, from the residuals and coverage kernels_db
// carries, is kernels_db's own, byte for byte: the file's readers and its writer agree. That the
// residuals are the cross-validation's, left out and in sample, is CrossValidation's and
// Calibration's (tests/host/estimate), which compute them in process.
TEST(BenchCli, ResidualsWriterGivesBackTheFileKernelsDbCarries) {
  const auto& db = lumos::cost::embedded_db();
  std::ostringstream written;
  lumos::report::residuals_json(written, db.residuals, db.coverage);
  std::ifstream in(std::string(LUMOS_KERNELS_DB) + "/calibration.json");
  const std::string stored((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(stored.empty());
  EXPECT_EQ(written.str(), stored);
}

// --unfitted: the table's columns no constant is fitted to, each with the flags that reproduce
// it, the FP8/BF16 pairs among them and the summaries; a check of its own.
TEST(BenchCli, UnfittedColumnsListRowsPairsAndSummaries) {
  const auto r = run_lumos("bench estimate --unfitted --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  const simdjson::dom::element d = p.parse(r.out);
  size_t rows = 0, pairs = 0;
  std::string proxy_options;
  double proxy_step_s = 0;
  for (auto row : d["rows"].get_array()) {
    ++rows;
    EXPECT_GT(row["published_step_s"].get_double().value(), 0.0);
    const std::string label(row["label"].get_string().value());
    if (label == "dgxc Llama3.1-405B FP8, 96 GPUs (21 layers)") {
      proxy_options = std::string(row["options"].get_string().value());
      proxy_step_s = row["step_time_s"].get_double().value();
    }
  }
  EXPECT_EQ(rows, 44u);
  for (auto pair : d["pairs"].get_array()) {
    ++pairs;
    EXPECT_GT(pair["published_ratio"].get_double().value(), 0.5);
    EXPECT_LT(pair["published_ratio"].get_double().value(), 1.0);
  }
  EXPECT_EQ(pairs, 22u);
  size_t summaries = 0;
  for (auto s : d["summary"].get_array()) {
    ++summaries;
    EXPECT_EQ(s["count"].get_int64().value(), 22);
  }
  EXPECT_EQ(summaries, 3u);
  size_t tables = 0;
  for (auto t : d["tables"].get_array()) {
    ++tables;
    EXPECT_LE(t["ratio_error_pct"]["least"].get_double().value(),
              t["ratio_error_pct"]["most"].get_double().value());
  }
  EXPECT_EQ(tables, 6u);  // five tables and the 405B proxies
  ASSERT_NE(proxy_options.find("--layers 21"), std::string::npos) << proxy_options;
  for (const char* flag : {"--pp 3 ", "--dp 2 ", "--interleave 7 "})
    EXPECT_NE(proxy_options.find(flag), std::string::npos) << flag << proxy_options;
  const auto e = run_lumos("estimate --json " + proxy_options);
  ASSERT_EQ(e.exit_code, 0) << e.out;
  simdjson::dom::parser ep;
  EXPECT_NEAR(ep.parse(e.out)["step_time_s"].get_double().value(), proxy_step_s, 1e-9);
  const auto text = run_lumos("bench estimate --unfitted");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  for (const char* line :
       {"unfitted columns:", "FP8/BF16 step ratio of each layout:",
        "  dgxc Llama3.1-405B proxies   3 columns: BF16 ", "  BF16 steps      22: mean |error| "})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
  for (const char* other : {"--cross-validate", "--runs 3"}) {
    const auto both = run_lumos(std::string("bench estimate --unfitted ") + other);
    EXPECT_EQ(both.exit_code, 1) << other;
    EXPECT_EQ(std::count(both.out.begin(), both.out.end(), '\n'), 1) << both.out;
  }
}
