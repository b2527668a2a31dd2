// The progress line of long commands, seen as a user sees it: lumos runs on a pseudo-terminal
// (its standard error a terminal, as in an interactive shell). LUMOS_PROGRESS_AFTER_S=0 shows
// the line of runs shorter than the two seconds a real run waits before drawing it. Piped, or
// with --quiet, nothing is drawn.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

// What `lumos ARGS` writes to its standard error when that is a terminal (standard output goes
// to /dev/null), and its exit code.
struct TerminalRun {
  int exit_code = -1;
  std::string err;
};

TerminalRun run_on_terminal(const std::string& args, const char* after_s = "0") {
  TerminalRun r;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) {
    ADD_FAILURE() << "forkpty failed";
    return r;
  }
  if (pid == 0) {
    if (after_s)
      setenv("LUMOS_PROGRESS_AFTER_S", after_s, 1);
    else
      unsetenv("LUMOS_PROGRESS_AFTER_S");
    const std::string cmd = "exec " + std::string(LUMOS_BINARY) + " " + args + " >/dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) r.err.append(buf, static_cast<size_t>(n));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EIO: the child closed the terminal
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A drawn line: "  DONE / TOTAL ITEMS, RATE/s, ..." ending "done in ...".
void expect_progress(const TerminalRun& r, const std::string& items) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(" " + items + ", "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/s, "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("done in "), std::string::npos) << r.err;
}

TEST(ProgressOnTerminal, SweepShowsConfigurationsDoneRateAndTime) {
  const TerminalRun r = run_on_terminal("sweep");
  expect_progress(r, "configurations");
  EXPECT_NE(r.err.find("144 / 144 configurations"), std::string::npos) << r.err;
}

TEST(ProgressOnTerminal, SearchShowsLayoutsRanked) {
  expect_progress(run_on_terminal("estimate --search --model gpt3-15b --gpus 16 --gbs 32 --top 1"),
                  "layouts ranked");
}

TEST(ProgressOnTerminal, WhatifGridShowsVariants) {
  expect_progress(run_on_terminal("whatif --gpus h100,h200,b200 --speed comm=0.5,1,2"), "variants");
}

TEST(ProgressOnTerminal, PlaceSweepsShowLevelsAndValues) {
  const std::string fleets = LUMOS_EXAMPLES_DIR "/fleets/";
  expect_progress(run_on_terminal("place " + fleets +
                                  "two-servers.toml --utilization 0:1:0.25 "
                                  "--job-score 1168"),
                  "utilization levels");
  expect_progress(
      run_on_terminal("place " + fleets + "two-servers.toml --sweep-grid-intensity 0:600:100"),
      "values");
}

TEST(ProgressOnTerminal, GenerateShowsStageTracesWritten) {
  TempDir dir;
  expect_progress(
      run_on_terminal("generate --tp 1 --pp 2 --dp 1 --gbs 2 -o " + dir.path() + "/job"),
      "stage traces written");
}

TEST(ProgressOnTerminal, QuietDrawsNothing) {
  const TerminalRun r = run_on_terminal("sweep --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(ProgressOnTerminal, ShortRunDrawsNothingBeforeTwoSeconds) {
  // The default delay: a run of a fraction of a second stays silent.
  const TerminalRun r = run_on_terminal("place " LUMOS_EXAMPLES_DIR
                                        "/fleets/two-servers.toml --sweep-grid-intensity 0:600:100",
                                        nullptr);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(ProgressOnTerminal, PipedOutputHasNoProgressLine) {
  const auto r = run_lumos("sweep");  // standard error into a pipe
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("configurations, "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
}

}  // namespace
