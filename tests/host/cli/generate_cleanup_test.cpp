// `lumos generate` writes its traces into a hidden `.NAME.tmp.PID` folder renamed into place at
// the end: SIGTERM or SIGINT part-way leaves neither that folder nor NAME, and a folder left by a
// process that was killed outright (SIGKILL) is removed by the next run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "support/test_util.hpp"

namespace fs = std::filesystem;

namespace {

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

// The entries of `dir` whose name starts with `prefix`.
size_t entries_starting(const std::string& dir, const std::string& prefix) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

// Starts a large `lumos generate -o DIR/big`, waits for its temporary folder, sends `sig`, and
// checks that nothing is left and that it died of the signal.
void interrupted_generate_leaves_nothing(int sig) {
  TempDir tmp;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string out = tmp.file("big");
    // A test runner started in the background ignores SIGINT, and so would its children.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execl(LUMOS_BINARY, LUMOS_BINARY, "generate", "--model", "gpt3-175b", "--tp", "8", "--pp",
            "32", "--dp", "1", "--gbs", "256", "-o", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  bool seen = false;
  for (int i = 0; i < 600 && !seen; ++i) {  // up to a minute on a loaded machine
    seen = entries_starting(tmp.path(), ".big.tmp.") > 0;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Some stages written, so that the signal lands while files are open.
  if (seen) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, sig);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(seen) << "the temporary folder never appeared";
  // Finished before the signal (a very fast machine): then the folder is complete, not hidden.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    EXPECT_TRUE(fs::is_directory(tmp.file("big")));
  } else {
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
    EXPECT_FALSE(fs::exists(tmp.file("big")));
  }
  EXPECT_EQ(entries_starting(tmp.path(), ".big.tmp."), 0u);
}

TEST(GenerateCleanup, SigtermRemovesTheTemporaryFolder) {
  interrupted_generate_leaves_nothing(SIGTERM);
}

TEST(GenerateCleanup, SigintRemovesTheTemporaryFolder) {
  interrupted_generate_leaves_nothing(SIGINT);
}

// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(GenerateCleanup, AFolderOfADeadProcessIsSweptAndALiveOnesKept) {
  TempDir tmp;
  const std::string stale = tmp.file(".job.tmp." + std::to_string(dead_pid()));
  const std::string live = tmp.file(".job.tmp." + std::to_string(::getpid()));
  const std::string other = tmp.file(".other.tmp." + std::to_string(dead_pid()));
  for (const std::string& d : {stale, live, other}) {
    fs::create_directory(d);
    std::ofstream(d + "/stage0.rank0.json") << "{}";
  }
  const auto r = run_lumos("generate --layers 2 --gbs 8 -o " + tmp.file("job"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));   // this test's process is alive
  EXPECT_TRUE(fs::exists(other));  // another output's: not this run's to judge
  EXPECT_TRUE(fs::is_directory(tmp.file("job")));
}

}  // namespace
