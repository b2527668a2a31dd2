// Helpers shared by the host tests: temporary files, the shared traces folder, running `lumos`.
#pragma once
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace lumos::testing {

inline std::string trace_dir() {
  return LUMOS_TRACE_DIR;
}

// Every shared Kineto trace (*.json.gz, not the execution traces), sorted; empty when the folder
// is missing.
inline std::vector<std::string> shared_traces() {
  std::vector<std::string> out;
  namespace fs = std::filesystem;
  if (!fs::exists(trace_dir())) return out;
  for (const auto& e : fs::recursive_directory_iterator(trace_dir())) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && p.size() > 8 && p.substr(p.size() - 8) == ".json.gz" &&
        p.find("_et.json") == std::string::npos)
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

#define LUMOS_REQUIRE_TRACES()                                                       \
  do {                                                                               \
    if (!std::filesystem::exists(::lumos::testing::trace_dir()))                     \
      GTEST_SKIP() << "shared traces not found at " << ::lumos::testing::trace_dir() \
                   << " (configure with -DLUMOS_TRACE_DIR=...)";                     \
  } while (0)

// A fresh temporary directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/lumos_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(file(name), std::ios::binary) << content;
    return file(name);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Whether a lumos run crashed or a sanitizer reported: under scripts/test.sh --sanitize a report
// exits 99 (ASAN_OPTIONS/UBSAN_OPTIONS exitcode=99; lumos itself exits 0, 1 or 2) and prints
// one of these markers; a signal shows as -1, or 128+N from the shell.
inline bool crashed_or_sanitizer_report(const RunResult& r) {
  return r.exit_code == 99 || r.exit_code < 0 || r.exit_code >= 128 ||
         r.out.find(": runtime error: ") != std::string::npos ||
         r.out.find("ERROR: AddressSanitizer") != std::string::npos ||
         r.out.find("ERROR: LeakSanitizer") != std::string::npos;
}

// Runs a shell command line and collects what it prints (stdout and stderr together only where the
// line redirects them).
inline RunResult run_shell(const std::string& cmd) {
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen failed: " << cmd;
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the lumos binary with a shell command line (arguments must be shell-safe); with
// timeout_s > 0 under timeout(1), so a command that would hang fails (exit 124) instead. A crash
// or a sanitizer report fails the calling test, whatever exit code the test expects.
inline RunResult run_lumos(const std::string& args, int timeout_s = 0) {
  const std::string prefix = timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : "";
  const RunResult r = run_shell(prefix + std::string(LUMOS_BINARY) + " " + args + " 2>&1");
  if (crashed_or_sanitizer_report(r))
    ADD_FAILURE() << "lumos " << args << " crashed or a sanitizer reported (exit " << r.exit_code
                  << "):\n"
                  << r.out;
  return r;
}

// `s` gzip-compressed (one member), as traces are stored.
inline std::string gzip_string(const std::string& s) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY);
  std::string out(compressBound(static_cast<uLong>(s.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The message of the InputError that f throws; empty when it throws none.
inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The command failed as bad input should: exit code 1 and one line naming the problem.
inline void expect_one_line_exit_1(const RunResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace lumos::testing
