// Streams and limits say what happened in one line: a full standard output, a link loop, a graph
// file given where a trace is read, a grid series over its size limit, and memory running out
// (inflating a gzip bomb, parsing a trace) are exit code 1 with one line naming the cause; a
// trace that starts with a UTF-8 byte order mark is read as without it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::expect_one_line_exit_1;
using lumos::testing::run_lumos;
using lumos::testing::run_shell;
using lumos::testing::TempDir;

// Address space limits (ulimit -v) and AddressSanitizer's shadow memory do not mix.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// `lumos ARGS` with its standard output on /dev/full: what it says on standard error.
lumos::testing::RunResult to_full_stdout(const std::string& args) {
  return run_shell(std::string(LUMOS_BINARY) + " " + args + " 2>&1 >/dev/full");
}

TEST(StreamErrors, AFullStandardOutputIsOneLine) {
  expect_one_line_exit_1(to_full_stdout("demo-trace -o -"), "standard output");
  expect_one_line_exit_1(to_full_stdout("replay --json"), "cannot write to standard output");
  expect_one_line_exit_1(to_full_stdout("estimate --search --gpus 16 --csv -"), "standard output");
}

TEST(StreamErrors, ALinkLoopIsBadInputInOneLine) {
  TempDir tmp;
  std::filesystem::create_symlink("loop", tmp.file("loop"));
  expect_one_line_exit_1(run_lumos("replay " + tmp.file("loop")),
                         "loop: Too many levels of symbolic links");
}

TEST(StreamErrors, ATraceWithAUtf8BomIsReadAsWithout) {
  TempDir tmp;
  ASSERT_EQ(run_lumos("demo-trace -o " + tmp.file("plain.json")).exit_code, 0);
  const auto plain = run_lumos("replay --json " + tmp.file("plain.json"));
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  std::ifstream in(tmp.file("plain.json"), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  tmp.write("bom.json", "\xEF\xBB\xBF" + text.str());
  const auto bom = run_lumos("replay --json " + tmp.file("bom.json"));
  ASSERT_EQ(bom.exit_code, 0) << bom.out;
  // The same report but for the file's name and size.
  auto step_times = [](const std::string& json) {
    const size_t at = json.find("\"steps\"");
    return at == std::string::npos ? std::string() : json.substr(at, 400);
  };
  EXPECT_FALSE(step_times(plain.out).empty()) << plain.out;
  EXPECT_EQ(step_times(bom.out), step_times(plain.out));
  EXPECT_EQ(run_lumos("cost classify " + tmp.file("bom.json")).exit_code, 0);
}

TEST(StreamErrors, CostClassifyOfAGraphFileSaysItWantsATrace) {
  TempDir tmp;
  ASSERT_EQ(run_lumos("demo-trace -o " + tmp.file("t.json")).exit_code, 0);
  ASSERT_EQ(run_lumos("ingest " + tmp.file("t.json") + " -o " + tmp.file("t.lgraph")).exit_code, 0);
  const auto r = run_lumos("cost classify " + tmp.file("t.lgraph"));
  expect_one_line_exit_1(r,
                         "t.lgraph: a .lgraph graph file; lumos cost classify reads a Kineto "
                         "trace");
  EXPECT_EQ(r.out.find("invalid JSON"), std::string::npos) << r.out;
}

// `copies` gzip members of 32 MiB each.
std::string gzip_bomb(int copies) {
  const std::string member = lumos::testing::gzip_string(std::string(32u << 20, 'a'));
  std::string out;
  for (int i = 0; i < copies; ++i) out += member;
  return out;
}

TEST(StreamErrors, AGridSeriesOverItsLimitNamesItsOwnLimit) {
  TempDir tmp;
  const std::string series = tmp.write("grid.csv.gz", gzip_bomb(9));  // 288 MiB inflated
  const auto r = run_lumos(
      "carbon --model gpt3-15b --layers 8 --tp 2 --pp 2 --dp 2 --gbs 16 --grid-series " + series);
  expect_one_line_exit_1(r,
                         "grid.csv.gz: inflates to more than the 256 MiB limit of a grid series");
  EXPECT_EQ(r.out.find("--max-trace-bytes"), std::string::npos) << r.out;
}

TEST(StreamErrors, AGzipBombUnderAMemoryLimitIsOutOfMemoryInOneLine) {
  if (kAsan) GTEST_SKIP() << "ulimit -v and AddressSanitizer do not mix";
  TempDir tmp;
  const std::string bomb = tmp.write("bomb.json.gz", gzip_bomb(64));  // 2 GiB inflated
  // 1 GiB of address space with the default --max-trace-bytes of 4 GiB.
  const auto r =
      run_shell("ulimit -v 1048576 && " + std::string(LUMOS_BINARY) + " replay " + bomb + " 2>&1");
  expect_one_line_exit_1(r, "bomb.json.gz: out of memory while inflating to ");
  EXPECT_NE(r.out.find("(limit 4 GiB of --max-trace-bytes)"), std::string::npos) << r.out;
}

TEST(StreamErrors, BenchWhatifOutOfMemoryIsNotInvalidJson) {
  if (kAsan) GTEST_SKIP() << "ulimit -v and AddressSanitizer do not mix";
  // Where memory runs out depends on the limit: each run either fits or says "out of memory".
  int failed = 0;
  for (const int kib : {80000, 100000, 120000}) {
    const auto r =
        run_shell("ulimit -v " + std::to_string(kib) + " && " + std::string(LUMOS_BINARY) +
                  " bench whatif --layers 32 --runs 1 2>&1 >/dev/null");
    if (r.exit_code == 0) continue;
    ++failed;
    expect_one_line_exit_1(r, "out of memory");
    EXPECT_EQ(r.out.find("invalid JSON"), std::string::npos) << r.out;
  }
  EXPECT_GT(failed, 0) << "no limit made it run out of memory";
}

}  // namespace
