// The `lumos estimate` and `lumos generate` commands: JSON fields, model files, overrides and
// one clear line with exit code 1 for invalid models and layouts.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "support/test_util.hpp"

using lumos::testing::run_lumos;
using lumos::testing::TempDir;
using namespace lumos::model;

namespace {

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST(EstimateCli, DefaultRunsWithoutInputAndJsonCarriesTheHeadlineFields) {
  const auto r = run_lumos("estimate --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_FALSE(p.parse(r.out).get(d)) << r.out;
  for (const char* k : {"step_time_s", "tokens_per_s", "model_tflops_per_gpu", "mfu", "hfu"}) {
    double v = 0;
    ASSERT_FALSE(d[k].get(v)) << k;
    EXPECT_GT(v, 0) << k;
  }
  for (const char* k :
       {"exposed_compute_us", "overlapped_us", "exposed_comm_us", "bubble_us", "other_us"}) {
    double v = -1;
    ASSERT_FALSE(d["breakdown"][k].get(v)) << k;
    EXPECT_GE(v, 0) << k;
  }
  bool fits = false;
  ASSERT_FALSE(d["memory"]["fits"].get(fits));
  double gemm_us = 0, comm_us = 0;
  ASSERT_FALSE(d["kernel_time_us"]["gemm"].get(gemm_us));
  ASSERT_FALSE(d["kernel_time_us"]["comm"].get(comm_us));
  EXPECT_GT(gemm_us, comm_us);  // GPT-3 15B at TP 2: GEMM-bound
  double step = 0, sum = 0;
  ASSERT_FALSE(d["step_time_s"].get(step));
  double window_us = 0;
  for (auto [k, v] : d["breakdown"].get_object())
    (k == "window_us" ? window_us : sum) += v.get_double().value();
  EXPECT_NEAR(sum * 1e-6, step, 1e-6 * step);  // the five parts add up to the step
  EXPECT_NEAR(window_us * 1e-6, step, 1e-6 * step);
}

TEST(EstimateCli, TextReportNamesTheLayoutAndMemoryVerdict) {
  const auto r =
      run_lumos("estimate --model llama3-70b --tp 8 --pp 4 --dp 2 --gbs 32 --sp --dist-opt");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("TP 8 x CP 1 x PP 4 x DP 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fits"), std::string::npos);
  EXPECT_NE(r.out.find("MFU"), std::string::npos);
}

// The FP8 reduce-scatter buffers through the command: the published runs' option string
// (estimate/published_runs.cpp) carries the flag, and the command prices the term it names.
TEST(EstimateCli, Fp8ReduceScatterBuffersAreAnOptionTheExplanationPrices) {
  const std::string job =
      "estimate --model llama3-70b --gpu h100 --tp 4 --pp 2 --dp 2 --gbs 16 --sp --dtype fp8 "
      "--stack nemo-2024 --explain";
  const auto on = run_lumos(job + " --tp-comm-fp8-reduce-scatter");
  ASSERT_EQ(on.exit_code, 0) << on.out;
  const auto at = on.out.find("fp8 reduce-scatters");
  ASSERT_NE(at, std::string::npos) << on.out;
  EXPECT_NE(on.out.substr(at, 80).find("1 B per element"), std::string::npos) << on.out;
  const auto off = run_lumos(job);
  ASSERT_EQ(off.exit_code, 0) << off.out;
  EXPECT_NE(off.out.substr(off.out.find("fp8 reduce-scatters"), 80).find("not used"),
            std::string::npos)
      << off.out;
  EXPECT_NE(off.out.find("step time"), std::string::npos);
  EXPECT_NE(on.out.substr(on.out.find("step time"), 40),
            off.out.substr(off.out.find("step time"), 40));
}

// Megatron-Core's tp_only_amax_red through the command: the amax all-reduce leaves the
// data-parallel replicas out, so the explanation prices it over TP x CP ranks without the wait
// for the last replica, and the step is shorter at data-parallel scale.
TEST(EstimateCli, TpOnlyAmaxReductionLeavesTheReplicaSkewOut) {
  const std::string job =
      "estimate --model llama3-70b --gpu h100 --tp 4 --cp 2 --pp 4 --interleave 5 --dp 64 "
      "--gbs 4096 --sp --dist-opt --dtype fp8 --stack nemo-2024 --explain";
  const auto all = run_lumos(job);
  const auto tp_only = run_lumos(job + " --tp-only-amax-red");
  ASSERT_EQ(all.exit_code, 0) << all.out;
  ASSERT_EQ(tp_only.exit_code, 0) << tp_only.out;
  auto row = [](const std::string& out, const std::string& term) {
    const auto at = out.find(term);
    return at == std::string::npos ? std::string() : out.substr(at, 90);
  };
  EXPECT_NE(row(all.out, "fp8 amax reduction").find("over 512 ranks, skew included"),
            std::string::npos)
      << all.out;
  EXPECT_NE(row(tp_only.out, "fp8 amax reduction").find("over 8 ranks (--tp-only-amax-red)"),
            std::string::npos)
      << tp_only.out;
  EXPECT_NE(row(all.out, "fp8 replica skew").find("last of 64 replicas"), std::string::npos);
  EXPECT_NE(row(tp_only.out, "fp8 replica skew").find("not used"), std::string::npos);
  EXPECT_NE(tp_only.out.find("amaxes reduced over TP x CP only"), std::string::npos);
  auto step_s = [](const std::string& out) {
    return std::stod(out.substr(out.find("step time") + 9));
  };
  EXPECT_LT(step_s(tp_only.out), 0.97 * step_s(all.out));
}

TEST(EstimateCli, InvalidLayoutsGetOneLineAndExitOne) {
  for (const char* args :
       {"estimate --tp 5",
        "estimate --gbs 63",
        "estimate --pp 1 --interleave 2",
        "estimate --pp 4 --interleave 2 --gbs 6 --dp 1",
        "estimate --model gpt4",
        "estimate --sp --tp 1",
        "estimate --recompute most",
        "estimate --dtype int4",
        "estimate --layers 0",
        "estimate --model llama3-405b --pp 8 --interleave 8 --tp 8",
        "estimate --gpu a100 --dtype fp8",
        "generate",
        "estimate --tp 0",
        "estimate --fsdp --dp 1",
        "estimate --tp-comm-fp8-reduce-scatter",
        "estimate --search --gpus 16 --gbs 64 --tp-comm-fp8-reduce-scatter",
        "estimate --tp-only-amax-red",
        "estimate --pp 1 --defer-embedding-wgrad 2",
        "estimate --defer-embedding-wgrad some",
        "estimate --defer-embedding-wgrad=-3",
        "estimate --defer-embedding-wgrad 0",
        "estimate --dtype fp8 --stack nemo-2025 --tp-only-amax-red",
        "estimate --search --gpus 16 --gbs 64 --dtype fp8 --stack torchtitan --tp-only-amax-red",
        "estimate --search --gpus 16 --gbs 64 --dtype fp8 --stack torchtitan --tp-only-amax-red "
        "--top 0"}) {
    const auto r = run_lumos(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
    EXPECT_EQ(lines(r.out), 1u) << args << "\n" << r.out;
  }
  const auto r = run_lumos("estimate --model llama3-405b --pp 8 --interleave 8 --tp 8");
  EXPECT_NE(r.out.find("--split-embedding"), std::string::npos) << r.out;
}

// A tensor-parallel overlap option the named layout cannot act on is refused, not ignored
// (a search passes through such layouts); the refusal says what the layout lacks.
TEST(EstimateCli, OverlapOptionsTheLayoutCannotUseAreRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {"estimate --model llama3-8b --tp 8 --pp 1 --dp 1 --gbs 8 --tp-comm-overlap on",
       "lumos: --tp-comm-overlap on: needs --tp > 1 and --sp"},
      {"estimate --model llama3-8b --tp 8 --pp 1 --dp 1 --gbs 8 --sp --dtype fp8 "
       "--tp-comm-fp8-reduce-scatter",
       "no userbuffers reduce-scatter to write FP8 into"},
      {"estimate --model llama3-8b --tp 8 --pp 1 --dp 1 --gbs 8 --sp --dtype fp8 "
       "--stack nemo-2024 --tp-comm-overlap off --tp-comm-fp8-reduce-scatter",
       "no userbuffers reduce-scatter to write FP8 into"},
      {"estimate --dtype FP8", "lumos: --dtype FP8: expected bf16, fp16 or fp8"},
      {"estimate --mbs 4096 --gbs 4096 --seq 1048576 --dp 1 --pp 1 --tp 1 --layers 1",
       "4294967296 tokens per micro-batch on a GPU, more than the 2^31 rows a GEMM takes"},
      {"estimate --foo", "lumos estimate: unknown option '--foo'"}};
  for (const auto& [args, want] : cases) {
    const auto r = run_lumos(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
    EXPECT_EQ(lines(r.out), 1u) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("lumos: lumos"), std::string::npos) << r.out;
  }
  // A userbuffers stack without sequence parallelism overlaps as Megatron's backward does, and
  // says so.
  const auto no_sp = run_lumos(
      "estimate --model llama3-8b --tp 2 --pp 1 --dp 1 --gbs 2 --stack nemo-2024 --explain");
  ASSERT_EQ(no_sp.exit_code, 0) << no_sp.out;
  EXPECT_NE(no_sp.out.find("tensor-parallel overlap backward"), std::string::npos) << no_sp.out;
  const auto row = no_sp.out.find("tp userbuffers");
  ASSERT_NE(row, std::string::npos) << no_sp.out;
  EXPECT_NE(no_sp.out.substr(row, 40).find("not used"), std::string::npos) << no_sp.out;
  // Userbuffers act where they can: with --sp the overlap and FP8 buffers price.
  EXPECT_EQ(run_lumos("estimate --model llama3-8b --tp 8 --pp 1 --dp 1 --gbs 8 --sp --dtype fp8 "
                      "--tp-comm-overlap on --tp-comm-fp8-reduce-scatter")
                .exit_code,
            0);
}

TEST(EstimateCli, GenerateWritesOneTracePerStageThatReplayReads) {
  TempDir tmp;
  const auto g = run_lumos("generate --pp 4 --layers 8 --gbs 16 -o " + tmp.file("out"));
  ASSERT_EQ(g.exit_code, 0) << g.out;
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.file("out")))
    n += e.is_regular_file();
  EXPECT_EQ(n, 4u);
  const auto r = run_lumos("replay " + tmp.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("4 ranks"), std::string::npos) << r.out;
}

// Without a preset nothing stands in for a field the file leaves out: the missing one is named,
// not reported as a zero the user never wrote; the head dimension follows hidden / heads.
TEST(ModelFile, AFileWithoutAPresetNamesTheFieldItLacks) {
  TempDir tmp;
  tmp.write("m.toml", "hidden = 4096\n");
  const auto r = run_lumos("estimate --model-file " + tmp.file("m.toml"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(tmp.file("m.toml") + ": layers: missing"), std::string::npos) << r.out;
  tmp.write("full.toml",
            "layers = 2\nhidden = 1024\nffn = 4096\nheads = 8\nvocab = 32000\nseq = 2048\n");
  const ModelSpec m = load_model_toml(tmp.file("full.toml"));
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.kv_heads, 8);
}

TEST(ModelFile, TomlStartsFromAPresetAndOverridesFields) {
  TempDir tmp;
  tmp.write("m.toml",
            "[model]\npreset = \"llama3-8b\"\nname = \"llama-wide\"\nhidden = 5120\n"
            "act = \"swiglu\"\n");
  const ModelSpec m = load_model_toml(tmp.file("m.toml"));
  EXPECT_EQ(m.name, "llama-wide");
  EXPECT_EQ(m.hidden, 5120);
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.kv_heads, 8);
  const auto r = run_lumos("estimate --model-file " + tmp.file("m.toml") +
                           " --tp 2 --pp 1 --dp 1 --gbs 2 --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("llama-wide"), std::string::npos);
}

TEST(ModelFile, BadFilesNameTheFileAndKey) {
  TempDir tmp;
  tmp.write("a.toml", "layers = \"many\"\n");
  tmp.write("b.toml", "layerz = 3\n");
  tmp.write("c.toml", "layers = [1\n");
  tmp.write("d.toml", "layers = 1.5\n");
  for (const char* f : {"a.toml", "b.toml", "c.toml", "d.toml"}) {
    const auto r = run_lumos("estimate --model-file " + tmp.file(f));
    EXPECT_EQ(r.exit_code, 1) << f << r.out;
    EXPECT_EQ(lines(r.out), 1u) << r.out;
    EXPECT_NE(r.out.find(f), std::string::npos) << r.out;
  }
  const auto missing = run_lumos("estimate --model-file " + tmp.file("none.toml"));
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  // A table other than [model] is named as such, with its line.
  tmp.write("e.toml", "preset = \"llama3-8b\"\n[foo]\nx = 1\n");
  const auto table = run_lumos("estimate --model-file " + tmp.file("e.toml"));
  EXPECT_EQ(table.exit_code, 1) << table.out;
  EXPECT_NE(table.out.find("e.toml:2: foo: not a table lumos reads"), std::string::npos)
      << table.out;
  const auto empty = run_lumos("estimate --model-file ''");
  EXPECT_EQ(empty.exit_code, 1) << empty.out;
  EXPECT_NE(empty.out.find("an empty path, expected a TOML model file"), std::string::npos)
      << empty.out;
}

TEST(Layout, ChecksNameTheRuleTheyBreak) {
  const ModelSpec m = preset("llama3-70b");
  auto why = [&](ParallelConfig c) {
    try {
      check_layout(m, c);
    } catch (const lumos::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ParallelConfig c;
  c.tp = 16;
  EXPECT_NE(why(c).find("KV heads"), std::string::npos);
  c = {};
  c.dp = 3, c.gbs = 4;
  EXPECT_NE(why(c).find("--gbs 4 not divisible"), std::string::npos);
  c = {};
  c.pp = 3;
  EXPECT_NE(why(c).find("layers (80) not divisible"), std::string::npos);
  c = {};
  c.pp = 4, c.interleave = 2, c.gbs = 6;
  EXPECT_NE(why(c).find("multiple of --pp"), std::string::npos);
  c = {};
  c.pp = 4, c.interleave = 4, c.gbs = 8, c.split_counts_embedding = true;
  EXPECT_NE(why(c).find("layers + 2 (82,"), std::string::npos);
  c = {};
  c.pp = 4, c.interleave = 1, c.gbs = 8, c.split_counts_embedding = true;
  EXPECT_NE(why(c).find("layers + 2 (82,"), std::string::npos);
  c = {};
  c.pp = 2, c.gbs = 8;
  EXPECT_EQ(why(c), "");
}

TEST(Layout, SplitWithEmbeddingGivesTheEndsOneLayerLess) {
  ModelSpec m = preset("llama3-405b");
  ParallelConfig c;
  c.tp = 8, c.pp = 8, c.interleave = 8, c.gbs = 8, c.split_counts_embedding = true;
  const Layout l = check_layout(m, c);
  ASSERT_EQ(l.chunk_layers.size(), 64u);
  EXPECT_EQ(l.chunk_layers.front(), 1);
  EXPECT_EQ(l.chunk_layers.back(), 1);
  int64_t total = 0;
  for (int64_t x : l.chunk_layers) total += x;
  EXPECT_EQ(total, 126);
}

TEST(EstimateCli, HeadOverrideOfAMultiHeadPresetKeepsItMultiHead) {
  const auto r = lumos::testing::run_lumos("estimate --heads 64 --head-dim 96 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"heads\":64,\"kv_heads\":64"), std::string::npos) << r.out;
  const auto gqa = lumos::testing::run_lumos(
      "estimate --model llama3-8b --tp 1 --pp 1 --dp 8 --heads 36 --head-dim 128");
  EXPECT_EQ(gqa.exit_code, 1);
  EXPECT_NE(gqa.out.find("kv_heads"), std::string::npos) << gqa.out;
}

// --json's layout carries every setting that changes the estimate, so a saved answer says what
// it was an answer to: the flags as given, the stack's choices as "stack".
TEST(EstimateCli, JsonLayoutReportsTheSettingsThatChangeTheEstimate) {
  const std::string base =
      "estimate --model llama3-70b --gpu h100 --tp 4 --pp 2 --dp 2 --gbs 16 --sp --dist-opt "
      "--dtype fp8 --stack nemo-2024 --json";
  const auto set =
      run_lumos(base +
                " --tp-comm-fp8-reduce-scatter --tp-only-amax-red --tp-comm-overlap "
                "on --overlap-grad-reduce off --grad-reduce-in-fp32 off --attention "
                "flash2 --param-remainders --split-embedding --defer-embedding-wgrad 3");
  const auto plain = run_lumos(base);
  ASSERT_EQ(set.exit_code, 0) << set.out;
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  for (const char* field :
       {"\"split_embedding\":true", "\"overlap_grad_reduce\":\"off\"", "\"tp_comm_overlap\":\"on\"",
        "\"tp_comm_fp8_reduce_scatter\":true", "\"tp_only_amax_reduction\":true",
        "\"grad_reduce_in_fp32\":\"off\"", "\"param_remainders\":true", "\"attention\":\"flash2\"",
        "\"deferred_embedding_wgrads\":3"})
    EXPECT_NE(set.out.find(field), std::string::npos) << field << "\n" << set.out;
  for (const char* field :
       {"\"split_embedding\":false", "\"overlap_grad_reduce\":\"stack\"",
        "\"tp_comm_overlap\":\"stack\"", "\"tp_comm_fp8_reduce_scatter\":false",
        "\"tp_only_amax_reduction\":false", "\"grad_reduce_in_fp32\":\"stack\"",
        "\"param_remainders\":false", "\"attention\":\"stack\"", "\"deferred_embedding_wgrads\":0"})
    EXPECT_NE(plain.out.find(field), std::string::npos) << field << "\n" << plain.out;
}

TEST(EstimateCli, StackIsReportedAndChangesTheEstimate) {
  const std::string base = "estimate --model gpt3-15b --gpu a100 --tp 2 --pp 1 --dp 1 --gbs 4 ";
  const auto core = run_lumos(base + "--json");
  const auto old = run_lumos(base + "--stack megatron-2021 --json");
  ASSERT_EQ(core.exit_code, 0) << core.out;
  ASSERT_EQ(old.exit_code, 0) << old.out;
  EXPECT_NE(core.out.find("\"stack\":\"megatron-core\""), std::string::npos);
  EXPECT_NE(old.out.find("\"stack\":\"megatron-2021\""), std::string::npos);
  auto step = [](const std::string& j) {
    return std::stod(j.substr(j.find("\"step_time_s\":") + 14));
  };
  // Unfused attention and synchronous tensor-parallel collectives take longer.
  EXPECT_GT(step(old.out), 1.05 * step(core.out));
  const auto text = run_lumos(base + "--stack torchtitan");
  EXPECT_NE(text.out.find("stack     torchtitan: flash2 attention, eager kernels"),
            std::string::npos)
      << text.out;
  const auto bad = run_lumos(base + "--stack megatron-1999");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("unknown software stack 'megatron-1999' (known: megatron-2021"),
            std::string::npos)
      << bad.out;
}

TEST(EstimateCli, ReportsARangeFromPublishedRunsOrWhyNot) {
  const auto a100 = run_lumos(
      "estimate --model gpt3-175b --gpu a100 --tp 8 --pp 12 --dp 8 --gbs 1536 --recompute full "
      "--dtype fp16 --stack megatron-2021 --json");
  ASSERT_EQ(a100.exit_code, 0) << a100.out;
  EXPECT_NE(a100.out.find("\"step_time_range\":{\"known\":true,\"low_s\":"), std::string::npos)
      << a100.out;
  EXPECT_NE(a100.out.find("published runs on a100/megatron-2021"), std::string::npos);
  const auto b200 = run_lumos("estimate --gpu b200");
  ASSERT_EQ(b200.exit_code, 0) << b200.out;
  EXPECT_NE(b200.out.find("(no range: fewer than two published runs on b200"), std::string::npos)
      << b200.out;
}

// --db reads every file of kernels_db from a folder: the repository's folder gives the embedded
// answer, range included.
TEST(EstimateCli, KernelsDbFolderGivesTheEmbeddedAnswer) {
  const auto embedded = run_lumos("estimate --json");
  const auto folder = run_lumos(std::string("estimate --json --db ") + LUMOS_KERNELS_DB);
  ASSERT_EQ(embedded.exit_code, 0) << embedded.out;
  ASSERT_EQ(folder.exit_code, 0) << folder.out;
  auto field = [](const std::string& j, const std::string& k) {
    const size_t at = j.find("\"" + k + "\":");
    return at == std::string::npos ? std::string() : j.substr(at, j.find(',', at) - at);
  };
  EXPECT_EQ(field(folder.out, "step_time_s"), field(embedded.out, "step_time_s"));
  EXPECT_EQ(field(folder.out, "low_s"), field(embedded.out, "low_s"));
  EXPECT_FALSE(field(folder.out, "low_s").empty()) << folder.out;
}

// Gradients in 16 bit halve the gradient buffer (and the reduction's bytes); remainders take
// 2 B of each parameter's optimizer state; FlashAttention-2 in place of cuDNN's attention is
// slower on an H100. Each says so in the stack line; bad values are one line and exit 1.
TEST(EstimateCli, GradientTypeRemaindersAndAttentionOverrideTheStack) {
  const std::string base =
      "estimate --model llama3-8b --layers 4 --tp 1 --pp 1 --dp 8 --gbs 8 --dist-opt ";
  auto number = [](const std::string& j, const std::string& key) {
    return std::stod(j.substr(j.find("\"" + key + "\":") + key.size() + 3));
  };
  const auto plain = run_lumos(base + "--json");
  const auto half = run_lumos(base + "--grad-reduce-in-fp32 off --param-remainders --json");
  const auto fa2 = run_lumos(base + "--attention flash2 --json");
  for (const auto* r : {&plain, &half, &fa2}) ASSERT_EQ(r->exit_code, 0) << r->out;
  EXPECT_NEAR(number(half.out, "grads_bytes") / number(plain.out, "grads_bytes"), 0.5, 1e-12);
  EXPECT_NEAR(number(half.out, "optimizer_bytes") / number(plain.out, "optimizer_bytes"), 10.0 / 12,
              1e-12);
  EXPECT_GT(number(fa2.out, "step_time_s"), number(plain.out, "step_time_s"));
  const auto text = run_lumos(base + "--grad-reduce-in-fp32 off --attention flash2");
  EXPECT_NE(text.out.find("flash2 attention"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("gradient reduction overlapped in 16 bit"), std::string::npos)
      << text.out;
  const auto bad = run_lumos(base + "--attention flash9");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("--attention flash9: expected flash2, flash3 or cudnn"), std::string::npos)
      << bad.out;
  const auto unfused = run_lumos(base + "--attention flash2 --stack megatron-2021");
  EXPECT_EQ(unfused.exit_code, 1);
  EXPECT_NE(unfused.out.find("runs unfused attention"), std::string::npos) << unfused.out;
  const auto type = run_lumos(base + "--grad-reduce-in-fp32 half");
  EXPECT_EQ(type.exit_code, 1);
  EXPECT_NE(type.out.find("--grad-reduce-in-fp32 half: expected on or off"), std::string::npos)
      << type.out;
}

TEST(EstimateCli, OverlapGradReduceOverridesTheStack) {
  // 32 GPUs over 4 nodes: the gradient all-reduce crosses the network.
  const std::string base = "estimate --model gpt3-15b --layers 8 --tp 1 --pp 1 --dp 32 --gbs 64 ";
  auto step = [](const std::string& j) {
    return std::stod(j.substr(j.find("\"step_time_s\":") + 14));
  };
  const auto on = run_lumos(base + "--overlap-grad-reduce on --json");
  const auto off = run_lumos(base + "--overlap-grad-reduce off --json");
  ASSERT_EQ(on.exit_code, 0) << on.out;
  ASSERT_EQ(off.exit_code, 0) << off.out;
  EXPECT_GT(step(off.out), step(on.out));  // reduced after the backward pass, not beside it
  EXPECT_NE(run_lumos(base + "--overlap-grad-reduce off")
                .out.find("gradient reduction after "
                          "backward"),
            std::string::npos);
  const auto bad = run_lumos(base + "--overlap-grad-reduce maybe");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("--overlap-grad-reduce maybe: expected on or off"), std::string::npos)
      << bad.out;
}
