// Inputs the commands read: only regular files (a pipe would hang, a folder has no bytes), "-"
// for standard input, and --max-trace-bytes on what a trace holds or inflates to.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "support/test_util.hpp"

using lumos::testing::expect_one_line_exit_1;
using lumos::testing::RunResult;
using lumos::testing::TempDir;

namespace {

// `lumos ARGS` under timeout(1), so that a command that would hang fails (exit 124) instead.
RunResult run_bounded(const std::string& args) {
  return lumos::testing::run_lumos(args, 60);
}

}  // namespace

TEST(InputFiles, ReplayOfANamedPipeFailsAtOnce) {
  TempDir tmp;
  const std::string fifo = tmp.file("trace.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const char* cmd : {"replay", "whatif", "cost classify"})
    expect_one_line_exit_1(run_bounded(std::string(cmd) + " " + fifo),
                           fifo + " is a named pipe (FIFO); expected a trace file");
  expect_one_line_exit_1(run_bounded("ingest " + fifo + " -o " + tmp.file("g.lgraph")),
                         "is a named pipe (FIFO)");
}

TEST(InputFiles, FolderGivenToACommandThatTakesOneTraceIsOneLine) {
  TempDir tmp;
  const std::string want = tmp.path() + " is a folder; expected a trace file";
  expect_one_line_exit_1(run_bounded("cost classify " + tmp.path()), want);
  // whatif takes a folder of one job's rank traces; an empty one is refused as such.
  expect_one_line_exit_1(run_bounded("whatif " + tmp.path()),
                         tmp.path() + ": no *.json or *.json.gz traces in the folder");
  expect_one_line_exit_1(run_bounded("ingest " + tmp.path() + " -o " + tmp.file("g.lgraph")), want);
  EXPECT_FALSE(std::filesystem::exists(tmp.file("g.lgraph")));
}

// A folder given as the grid series is named as what was expected there, not as a trace.
TEST(InputFiles, FolderGivenAsAGridSeriesIsNamedAsSuch) {
  TempDir tmp;
  expect_one_line_exit_1(
      run_bounded("carbon --grid-series " + tmp.path()),
      tmp.path() + " is a folder; expected an hourly grid series (CSV, plain or gzip)");
}

TEST(InputFiles, DeviceIsRefused) {
  expect_one_line_exit_1(run_bounded("replay /dev/zero"),
                         "/dev/zero is a character device; expected a trace file");
}

TEST(InputFiles, KernelsDbFileThatIsAPipeIsRefused) {
  TempDir tmp;
  ASSERT_EQ(mkfifo(tmp.file("gpus.json").c_str(), 0600), 0);
  expect_one_line_exit_1(run_bounded("cost gemm --m 64 --n 64 --k 64 --db " + tmp.path()),
                         "gpus.json is a named pipe (FIFO); expected a kernels_db JSON file");
}

TEST(InputFiles, ReplayReadsATraceFromStandardInput) {
  TempDir tmp;
  ASSERT_EQ(run_bounded("demo-trace -o " + tmp.file("d.json")).exit_code, 0);
  ASSERT_EQ(std::system(("gzip -k " + tmp.file("d.json")).c_str()), 0);
  for (const char* f : {"d.json", "d.json.gz"}) {
    const auto r = run_bounded("replay --json - < " + tmp.file(f));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("<stdin>"), std::string::npos) << f;
  }
  const auto file = run_bounded("replay " + tmp.file("d.json"));
  const auto piped = run_bounded("replay - < " + tmp.file("d.json"));
  ASSERT_EQ(piped.exit_code, 0) << piped.out;
  EXPECT_EQ(piped.out.substr(piped.out.find('\n')), file.out.substr(file.out.find('\n')));
  expect_one_line_exit_1(run_bounded("replay --max-trace-bytes 1KiB - < " + tmp.file("d.json")),
                         "<stdin>: holds more than the 1 KiB limit of --max-trace-bytes");
}

TEST(InputFiles, MaxTraceBytesStopsAGzipBombNamingTheLimit) {
  TempDir tmp;
  ASSERT_EQ(std::system(("head -c 8M /dev/zero | gzip -1 > " + tmp.file("bomb.json.gz")).c_str()),
            0);
  for (const char* cmd : {"replay", "whatif", "cost classify"})
    expect_one_line_exit_1(
        run_bounded(std::string(cmd) + " --max-trace-bytes 1MiB " + tmp.file("bomb.json.gz")),
        "bomb.json.gz: inflates to more than the 1 MiB limit of --max-trace-bytes");
  expect_one_line_exit_1(run_bounded("ingest --max-trace-bytes 1MiB " + tmp.file("bomb.json.gz") +
                                     " -o " + tmp.file("g.lgraph")),
                         "limit of --max-trace-bytes");
}

TEST(InputFiles, MaxTraceBytesAppliesToEveryRankOfAFolder) {
  TempDir tmp;
  ASSERT_EQ(run_bounded("demo-trace -o " + tmp.file("rank0.json")).exit_code, 0);
  expect_one_line_exit_1(run_bounded("replay --max-trace-bytes 4KiB " + tmp.path()),
                         "rank0.json: holds");
}

TEST(InputFiles, MaxTraceBytesTakesSizesWithUnits) {
  EXPECT_EQ(run_bounded("replay --max-trace-bytes 512MiB").exit_code, 0);
  expect_one_line_exit_1(run_bounded("replay --max-trace-bytes 0 /dev/null"),
                         "--max-trace-bytes: expected a size from 1 byte to 8 PiB, got '0'");
  expect_one_line_exit_1(run_bounded("replay --max-trace-bytes 1e300TiB /dev/null"),
                         "--max-trace-bytes: size '1e300TiB' is out of range");
  expect_one_line_exit_1(run_bounded("replay --max-trace-bytes lots /dev/null"),
                         "--max-trace-bytes: expected a size such as");
}
