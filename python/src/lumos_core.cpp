// lumos._core: the lumos commands inside Python. `run(args)` runs `lumos ARGS...` through the
// same dispatcher as the command line (host/cli/dispatch.cpp) and returns what it printed, so
// every Python function is the CLI's code, not a second implementation (python/lumos/).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <cxxopts.hpp>

#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace py = pybind11;

namespace {

// Sends a standard stream into a string while it lives.
class Capture {
 public:
  explicit Capture(std::ostream& os) : os_(os), old_(os.rdbuf(buf_.rdbuf())) {}
  ~Capture() { os_.rdbuf(old_); }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  std::string text() const { return buf_.str(); }

 private:
  std::ostream& os_;
  std::ostringstream buf_;
  std::streambuf* old_;
};

// The last non-empty line of `text`: a command's one-line error.
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return text;
  const size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "lumos commands, run in process (see the lumos package)";
  static py::exception<lumos::InputError> error(m, "LumosError", PyExc_ValueError);
  m.def(
      "run",
      [](const std::vector<std::string>& args) {
        std::vector<std::string> owned = {"lumos"};
        owned.insert(owned.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& a : owned) argv.push_back(a.data());
        argv.push_back(nullptr);
        const std::string cmd = args.empty() ? "" : args[0];
        std::string out, err, message;
        int rc = 0;
        {
          py::gil_scoped_release unlocked;
          // The standard streams are global: one command at a time captures them.
          static std::mutex one_at_a_time;
          const std::lock_guard<std::mutex> lock(one_at_a_time);
          Capture cout(std::cout), cerr(std::cerr);
          try {
            rc = lumos::cli::dispatch(static_cast<int>(owned.size()), argv.data());
          } catch (const lumos::InputError& e) {
            rc = 1, message = std::string("lumos: ") + e.what();
          } catch (const cxxopts::exceptions::exception& e) {
            rc = 1, message = "lumos " + cmd + ": " + e.what();
          } catch (const std::exception& e) {
            rc = 2, message = std::string("lumos: internal error: ") + e.what();
          }
          std::cout.flush();
          out = cout.text(), err = cerr.text();
        }
        if (rc == 2) throw std::runtime_error(message);
        if (rc != 0) {
          PyErr_SetString(error.ptr(), (message.empty() ? last_line(err) : message).c_str());
          throw py::error_already_set();
        }
        // Bytes: a trace's kernel names need not be valid UTF-8 (Python decodes with care).
        return py::make_tuple(py::bytes(out), py::bytes(err));
      },
      py::arg("args"),
      "Runs `lumos ARGS...` in process; returns (stdout, stderr) as bytes. Raises LumosError with "
      "the command's one-line message on bad input.");
}
