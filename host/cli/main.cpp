// The `lumos` command: dispatches to subcommands and turns errors into exit codes
// (0 success, 1 bad input or options, 2 internal error).
#include <cxxopts.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace {

// cxxopts quotes names with typographic quotes (U+2018, U+2019); every other message of lumos
// uses ASCII ones, which any terminal and log shows alike.
std::string ascii_quotes(std::string s) {
  for (const char* curly : {"\u2018", "\u2019"})
    for (size_t at = s.find(curly); at != std::string::npos; at = s.find(curly, at + 1))
      s.replace(at, std::strlen(curly), "'");
  return s;
}

int run(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  try {
    return lumos::cli::dispatch(argc, argv);
  } catch (const lumos::InputError& e) {
    // A message that names its command already ("lumos estimate: ...") is not prefixed again.
    const std::string what = e.what();
    std::cerr << (what.rfind("lumos ", 0) == 0 ? "" : "lumos: ") << what << '\n';
    return 1;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "lumos " << cmd << ": " << ascii_quotes(e.what()) << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    // Memory is the machine's limit, not a bug: the input or the options asked for more.
    std::cerr << "lumos " << cmd
              << ": out of memory (the input or the options ask for more than this machine or "
                 "its limit allows)\n";
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the system cannot follow (a link loop, a name too long, no permission) is the
    // input's problem: named with the system's reason.
    std::cerr << "lumos " << cmd << ": "
              << (e.path1().empty() ? std::string(e.what())
                                    : e.path1().string() + ": " + e.code().message())
              << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "lumos: internal error: " << e.what() << '\n';
    return 2;
  }
}

// Whether everything written to standard output reached it. A report sent to a full disk or a
// closed pipe is lost; exit 0 would claim it was delivered.
bool stdout_delivered() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  return flushed && !std::cout.fail() && !std::ferror(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int rc = run(argc, argv);
  // A failed run has said why in its one line (a write to standard output that failed included).
  if (!stdout_delivered() && rc == 0) {
    const int err = errno;
    std::cerr << "lumos: cannot write to standard output"
              << (err ? std::string(" (") + std::strerror(err) + ")" : std::string()) << '\n';
    rc = 1;
  }
  return rc;
}
