// Bad input gets one clear line naming the file, the event or byte and the field, and exit
// code 1 from the command, never a crash and never a partial output file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "fuzz/fuzz_cases.hpp"
#include "graph/graph_builder.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/kineto_writer.hpp"

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

namespace {

std::string load_error(const std::string& json) {
  try {
    const auto t = lumos::trace::parse_trace_bytes(json.data(), json.size(), "bad.json");
    lumos::graph::build_graph(t);
  } catch (const lumos::InputError& e) {
    return e.what();
  }
  return "";
}

void expect_one_line_exit_1(const std::string& args, const std::string& needle) {
  const auto r = run_lumos(args);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace

TEST(BadInput, InvalidJsonNamesTheEvent) {
  const std::string e = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1},{"ph":"X",)J");
  EXPECT_NE(e.find("bad.json: invalid JSON"), std::string::npos) << e;
}

TEST(BadInput, MissingFieldNamesEventAndField) {
  const std::string e = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"dur":1}]})J");
  EXPECT_NE(e.find("event #0"), std::string::npos) << e;
  EXPECT_NE(e.find("field 'ts'"), std::string::npos) << e;
}

TEST(BadInput, MistypedFieldSaysWhatWasExpected) {
  const std::string e = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"correlation":"x7"}}]})J");
  EXPECT_NE(e.find("field 'args.correlation': expected an integer"), std::string::npos) << e;
  const std::string e2 = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":"soon","dur":1}]})J");
  EXPECT_NE(e2.find("field 'ts'"), std::string::npos) << e2;
}

TEST(BadInput, NegativeDurationIsRejected) {
  const std::string e = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":5,"dur":-3}]})J");
  EXPECT_NE(e.find("field 'dur': expected a non-negative number"), std::string::npos) << e;
}

TEST(BadInput, EmptyTraceIsRejected) {
  EXPECT_NE(load_error(R"J({"traceEvents":[]})J").find("empty trace"), std::string::npos);
  EXPECT_NE(load_error(R"J({"schemaVersion":1})J").find("'traceEvents': missing"),
            std::string::npos);
  EXPECT_NE(load_error("42").find("expected a JSON object"), std::string::npos);
}

TEST(BadInput, SyncEventWithoutCorrelationIsRejected) {
  const std::string e = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":5,"dur":3,"args":{"stream":7}}]})J");
  EXPECT_NE(e.find("args.correlation"), std::string::npos) << e;
}

TEST(BadInput, DanglingCorrelationIdsAreRejected) {
  lumos::trace::KinetoWriter w;
  const int64_t wait = w.runtime(1, "cudaStreamWaitEvent", 9, 2);
  w.sync("Stream Wait Event", wait, 0, 20, 9, 2, 7, 777);  // no cudaEventRecord with id 777
  std::string e = load_error(w.json());
  EXPECT_NE(e.find("field 'args.wait_on_cuda_event_record_corr_id'"), std::string::npos) << e;
  EXPECT_NE(e.find("dangling id 777"), std::string::npos) << e;
  lumos::trace::KinetoWriter w2;
  w2.sync("Stream Sync", 4242, 0, 7, 1, 1);
  e = load_error(w2.json());
  EXPECT_NE(e.find("field 'args.correlation'"), std::string::npos) << e;
}

TEST(BadInput, GpuOrderThatContradictsLaunchOrderIsACycle) {
  // k_late runs before k_early on stream 7 although the thread launched it after a sync that
  // waited for k_early: launch -> k_late -> k_early (stream order) -> sync -> launch.
  lumos::trace::KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 2, "kernel", "k_early", 0, 7, 20, 5);  // 20..25
  const int64_t corr = w.runtime(1, "cudaStreamSynchronize", 3, 23);        // returns 26
  w.sync("Stream Sync", corr, 0, 7, 3, 23);
  w.launch(1, "cudaLaunchKernel", 30, 2, "kernel", "k_late", 0, 7, 10, 5);  // runs at 10..15
  const std::string e = load_error(w.json());
  EXPECT_NE(e.find("dependency cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("k_late"), std::string::npos) << e;
}

TEST(BadInput, TruncatedGzipExitsOneWithoutPartialOutput) {
  TempDir tmp;
  // A valid gzip of a trace, cut in half.
  const auto full = run_lumos("demo-trace -o " + tmp.file("demo.json"));
  ASSERT_EQ(full.exit_code, 0) << full.out;
  ASSERT_EQ(std::system(("gzip -k " + tmp.file("demo.json")).c_str()), 0);
  const auto size = std::filesystem::file_size(tmp.file("demo.json.gz"));
  std::filesystem::resize_file(tmp.file("demo.json.gz"), size / 2);
  expect_one_line_exit_1(
      "replay " + tmp.file("demo.json.gz") + " --timeline " + tmp.file("out.json"),
      "truncated or corrupt gzip");
  EXPECT_FALSE(std::filesystem::exists(tmp.file("out.json")));
  expect_one_line_exit_1("ingest " + tmp.file("demo.json.gz") + " -o " + tmp.file("g.lgraph"),
                         "truncated or corrupt gzip");
  EXPECT_FALSE(std::filesystem::exists(tmp.file("g.lgraph")));
}

TEST(BadInput, CommandLineErrorsExitOne) {
  expect_one_line_exit_1("replay /nonexistent/trace.json", "cannot open file");
  expect_one_line_exit_1("replay --from-step 1", "go together");
  expect_one_line_exit_1("replay --bogus", "bogus");
  expect_one_line_exit_1("replay --from-step 1 --predict-step 7", "no ProfilerStep#7");
  expect_one_line_exit_1("replay --critical-path sideways", "expected hta or timing");
  expect_one_line_exit_1("frobnicate", "unknown command");
  // The option parser's own messages name the option in plain quotes, as lumos's do.
  expect_one_line_exit_1("estimate --tp", "Option 'tp' is missing an argument");
  expect_one_line_exit_1("sweep --gpus", "Option 'gpus' is missing an argument");
}

// A decimal option is the whole text a finite number, or one line naming the option: no trailing
// characters read as the number before them, no exception out of the parse for a value past a
// double's range, no tokens below one.
TEST(BadInput, DecimalOptionsNameTheOptionAndTheText) {
  expect_one_line_exit_1("carbon --tokens 12abc",
                         "--tokens: expected a finite number, got '12abc'");
  expect_one_line_exit_1("carbon --tokens nan", "--tokens: expected a finite number, got 'nan'");
  expect_one_line_exit_1("carbon --tokens 1e309", "--tokens: expected a finite number");
  expect_one_line_exit_1("carbon --tokens 1e-300", "--tokens must be at least 1");
  expect_one_line_exit_1("carbon --pue 1.2x", "--pue: expected a finite number, got '1.2x'");
  expect_one_line_exit_1("sweep --tokens 1e-300", "--tokens: expected a number of tokens from 1");
  expect_one_line_exit_1("cost optimizer --params 12abc", "--params: expected a finite number");
  expect_one_line_exit_1("cost collective --op allreduce --bytes 1GiB --ranks 16 --nic-gbps 4x",
                         "--nic-gbps: expected a finite number, got '4x'");
  expect_one_line_exit_1("place " + std::string(LUMOS_EXAMPLES_DIR) +
                             "/fleets/mit-740.toml --score-year --grid-intensity 12abc",
                         "--grid-intensity: expected a finite number");
}

// Every count at its range's top still prices in range: a GEMM whose output tiles would not fit
// a 64-bit count is refused, not wrapped.
TEST(BadInput, GemmAtTheDimensionLimitsIsRefusedNotWrapped) {
  expect_one_line_exit_1("cost gemm --m 2147483648 --n 2147483648 --k 2147483648 --batch 16777216",
                         "output elements; at most 2^53");
}

TEST(BadInput, FuzzCorpusNeverCrashesTheLoader) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& e : fs::directory_iterator(LUMOS_FUZZ_CORPUS)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    try {
      const auto t = lumos::trace::parse_trace_bytes(bytes.data(), bytes.size(), e.path().string());
      lumos::graph::build_graph(t);
    } catch (const lumos::InputError&) {
      // a clear rejection is the other acceptable outcome
    }
    ++files;
  }
  EXPECT_GT(files, 0) << "fuzz corpus is empty: " << LUMOS_FUZZ_CORPUS;
}

TEST(BadInput, EstimateFuzzCorpusNeverCrashesTheModelPath) {
  namespace fs = std::filesystem;
  const fs::path corpus = fs::path(LUMOS_FUZZ_CORPUS).parent_path() / "estimate_corpus";
  TempDir tmp;
  int files = 0;
  for (const auto& e : fs::directory_iterator(corpus)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    lumos::fuzz::estimate_case(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                               tmp.file("model.toml"));
    ++files;
  }
  EXPECT_GT(files, 0) << "estimate fuzz corpus is empty: " << corpus;
}

TEST(BadInput, HugeTimesIdsAndGridsAreRejectedNotUndefined) {
  // ts that overflows nanoseconds, ts + dur that overflows, an id beyond int64.
  EXPECT_NE(
      load_error(
          R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":9223372036854779,"dur":1}]})J")
          .find("field 'ts'"),
      std::string::npos);
  EXPECT_NE(
      load_error(
          R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":9000000000000000,"dur":900000000000000}]})J")
          .find("field 'ts'"),
      std::string::npos);
  EXPECT_NE(
      load_error(
          R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"correlation":1e30}}]})J")
          .find("args.correlation"),
      std::string::npos);
  std::string axis = "memory=";
  for (int i = 0; i < 20000; ++i) axis += (i ? ",1" : "1");  // 10 x 100 x 20000 = 2e7 variants
  expect_one_line_exit_1(
      "whatif --speed "
      "'compute=1,1,1,1,1,1,1,1,1,1;comm=1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
      "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
      "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1;" +
          axis + "'",
      "at most 10,000,000");
  expect_one_line_exit_1("replay --speed compute=1e-50", "out of range");
}

TEST(BadInput, MultiRankFoldersWithClashingRanksOrOddFilesAreClear) {
  TempDir tmp;
  lumos::trace::KinetoWriter w;
  w.set_rank(0, 2);
  w.launch(1, "cudaLaunchKernel", 1, 5, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0,
           7, 10, 5);
  tmp.write("a.json", w.json());
  tmp.write("b.json", w.json());  // rank 0 again
  tmp.write("x.txt", "not a trace");
  expect_one_line_exit_1("replay " + tmp.path(), "are both rank 0");
  w.set_rank(1, 2);
  tmp.write("b.json", w.json());  // rank 1 now: the folder holds its whole world
  expect_one_line_exit_1("replay " + tmp.path() + " --skew 0:nan", "bad value");
}
