// Output and input handling under hostile paths: outputs go only to regular files (a link to a
// device, a FIFO or a folder is refused and left as it was; `-` is standard output for text
// outputs), standard output that cannot be written fails the command, a trace with text after
// its JSON document is refused with the byte offset, and `generate` leaves its folder complete
// or absent.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_util.hpp"

using lumos::testing::RunResult;
using lumos::testing::TempDir;
namespace fs = std::filesystem;

namespace {

RunResult sh(const std::string& cmd) {
  return lumos::testing::run_shell(cmd);
}

// `lumos ARGS` run inside dir (so that a file named "-" would land there, not in the build).
RunResult lumos_in(const std::string& dir, const std::string& args) {
  return sh("cd " + dir + " && " + std::string(LUMOS_BINARY) + " " + args + " 2>&1");
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Every command's output flag, aimed at `target`.
std::vector<std::string> output_commands(const std::string& target) {
  return {"demo-trace -o " + target,
          "replay --timeline " + target,
          "replay --json --timeline " + target,
          "ingest demo.json -o " + target,
          "whatif --csv " + target,
          "estimate --search --gpus 16 --csv " + target,
          "generate --layers 2 --gbs 8 -o " + target};
}

}  // namespace

TEST(OutputPaths, ALinkToACharacterDeviceIsRefusedAndLeftInPlace) {
  TempDir tmp;
  ASSERT_EQ(lumos_in(tmp.path(), "demo-trace -o demo.json").exit_code, 0);
  const std::string link = tmp.file("null");
  fs::create_symlink("/dev/null", link);
  for (const std::string& c : output_commands("null")) {
    const auto r = lumos_in(tmp.path(), c);
    EXPECT_EQ(r.exit_code, 1) << c << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1u) << c << ": " << r.out;
    if (c.rfind("generate", 0) == 0)
      EXPECT_NE(r.out.find("not a folder"), std::string::npos) << c << ": " << r.out;
    else
      EXPECT_NE(r.out.find("null: a character device"), std::string::npos) << c << ": " << r.out;
    ASSERT_TRUE(fs::is_symlink(fs::symlink_status(link))) << c << " replaced the link";
    EXPECT_EQ(fs::read_symlink(link), "/dev/null");
  }
}

TEST(OutputPaths, AFifoOrAFolderIsRefusedAndLeftInPlace) {
  TempDir tmp;
  ASSERT_EQ(lumos_in(tmp.path(), "demo-trace -o demo.json").exit_code, 0);
  ASSERT_EQ(::mkfifo(tmp.file("fifo").c_str(), 0644), 0);
  fs::create_directory(tmp.file("folder"));
  for (const std::string& c : output_commands("fifo")) {
    if (c.rfind("generate", 0) == 0) continue;
    const auto r = lumos_in(tmp.path(), c);
    EXPECT_EQ(r.exit_code, 1) << c << ": " << r.out;
    EXPECT_NE(r.out.find("fifo: a named pipe (FIFO); outputs go only to regular files"),
              std::string::npos)
        << c << ": " << r.out;
    ASSERT_TRUE(fs::is_fifo(tmp.file("fifo"))) << c << " replaced the FIFO";
  }
  for (const std::string& c : output_commands("folder")) {
    if (c.rfind("generate", 0) == 0) continue;
    const auto r = lumos_in(tmp.path(), c);
    EXPECT_EQ(r.exit_code, 1) << c << ": " << r.out;
    EXPECT_NE(r.out.find("folder: a folder"), std::string::npos) << c << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1u) << c << ": " << r.out;
  }
  EXPECT_TRUE(fs::is_empty(tmp.file("folder")));
}

TEST(OutputPaths, DashIsStandardOutputForTextOutputsOnly) {
  TempDir tmp;
  auto r = lumos_in(tmp.path(), "demo-trace -o -");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("{\"schemaVersion\"", 0), 0u) << r.out.substr(0, 200);
  r = lumos_in(tmp.path(), "replay --timeline -");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // The timeline takes the place of the report: stdout is one JSON document.
  EXPECT_EQ(r.out.rfind("{\"displayTimeUnit\"", 0), 0u) << r.out.substr(0, 200);
  EXPECT_EQ(r.out.find("measured_us"), std::string::npos);
  r = lumos_in(tmp.path(), "whatif --csv -");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("Pareto"), std::string::npos) << r.out;
  r = lumos_in(tmp.path(), "replay --json --timeline -");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("both write to standard output"), std::string::npos) << r.out;
  ASSERT_EQ(lumos_in(tmp.path(), "demo-trace -o demo.json").exit_code, 0);
  r = lumos_in(tmp.path(), "ingest demo.json -o -");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("binary"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(tmp.file("-")));  // no file named "-" either
}

TEST(StandardOutput, AFullStandardOutputFailsEveryCommandWithOneLine) {
  for (const std::string c : {"replay", "replay --json", "estimate", "estimate --json",
                              "cost gemm -m 1024 -n 1024 -k 1024", "whatif", "info"}) {
    // stderr to the pipe first, then stdout to the full device.
    const auto r = sh(std::string(LUMOS_BINARY) + " " + c + " 2>&1 >/dev/full");
    EXPECT_EQ(r.exit_code, 1) << c << ": " << r.out;
    EXPECT_EQ(r.out.rfind("lumos: cannot write to standard output", 0), 0u) << c << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1u) << c << ": " << r.out;
  }
}

TEST(TraceInput, TwoConcatenatedDocumentsAreRefusedAtTheSecondsByteOffset) {
  TempDir tmp;
  ASSERT_EQ(lumos_in(tmp.path(), "demo-trace -o one.json").exit_code, 0);
  const std::string one = slurp(tmp.file("one.json"));
  tmp.write("two.json", one + "\n" + one);
  auto r = lumos_in(tmp.path(), "replay two.json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(lines(r.out), 1u) << r.out;
  EXPECT_NE(r.out.find("two.json: unexpected text after the JSON document at byte " +
                       std::to_string(one.size() + 1)),
            std::string::npos)
      << r.out;
  // Trailing text that is no document: the offset of the last byte, where it went wrong.
  tmp.write("junk.json", one + " x\n");
  r = lumos_in(tmp.path(), "replay junk.json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("byte " + std::to_string(one.size() + 1)), std::string::npos) << r.out;
  // Trailing white space is fine.
  tmp.write("space.json", one + " \n\t\n");
  EXPECT_EQ(lumos_in(tmp.path(), "replay space.json").exit_code, 0);
}

TEST(GenerateOutput, AFailureAtTheSecondStageLeavesNoFolder) {
  TempDir tmp;
  const std::string args = "generate --layers 2 --gbs 8 --tp 1 --dp 1 --pp 2 -o ";
  ASSERT_EQ(lumos_in(tmp.path(), args + "full").exit_code, 0);
  std::vector<uintmax_t> sizes;
  for (const auto& e : fs::directory_iterator(tmp.file("full"))) sizes.push_back(e.file_size());
  ASSERT_EQ(sizes.size(), 2u);
  std::sort(sizes.begin(), sizes.end());
  // A file-size limit between the two stages' sizes lets stage 0 be written and not stage 1 (as
  // a disk that fills at the second stage); SIGXFSZ ignored, so the write fails with EFBIG.
  const uintmax_t blocks = (sizes[0] + sizes[1]) / 2 / 512;
  if (blocks * 512 <= sizes[0] || blocks * 512 >= sizes[1])
    GTEST_SKIP() << "stage files too alike in size: " << sizes[0] << ", " << sizes[1];
  std::string first;
  for (const auto& e : fs::directory_iterator(tmp.file("full")))
    if (e.file_size() == sizes[0]) first = e.path().filename().string();
  ASSERT_EQ(first.rfind("stage0", 0), 0u) << "the smaller file is not the first stage";
  const auto r = sh("cd " + tmp.path() + " && trap '' XFSZ && ulimit -f " + std::to_string(blocks) +
                    " && " + LUMOS_BINARY + " " + args + "out 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(fs::exists(tmp.file("out"))) << "a partial folder replays as a smaller job";
  size_t entries = 0;  // no temporary folder left beside it either
  for (const auto& e : fs::directory_iterator(tmp.path())) entries += e.path() != tmp.file("full");
  EXPECT_EQ(entries, 0u);
}

TEST(GenerateOutput, ANonEmptyFolderIsRefusedAndAnEmptyOneFilled) {
  TempDir tmp;
  const std::string args = "generate --layers 2 --gbs 8 -o ";
  fs::create_directory(tmp.file("busy"));
  tmp.write("busy/notes.txt", "mine");
  auto r = lumos_in(tmp.path(), args + "busy");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("busy: the folder exists and is not empty"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(tmp.file("busy/notes.txt")), "mine");
  fs::create_directory(tmp.file("empty"));
  r = lumos_in(tmp.path(), args + "empty/");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.file("empty")), fs::directory_iterator()), 2);
  // Generated stage traces stand for the whole job: they replay without --allow-partial.
  r = lumos_in(tmp.path(), "replay empty");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
}
