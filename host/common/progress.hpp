// The progress of a long command on a terminal: items done of the total, the rate and the time
// left, redrawn on one line of standard error. When standard error is not a terminal (a pipe, a
// file, a test) or the user asked for --quiet it prints nothing, so that logs and captured output
// stay clean. A run shorter than two seconds prints nothing either: the line is for waits a user
// notices (docs/design.md, "Outputs"). LUMOS_PROGRESS_AFTER_S sets that delay in seconds (tests
// set 0 to see the line of a short run).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace lumos {

// What long work calls as it goes: `done` of `total` items. Empty when nobody watches.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

class Progress {
 public:
  // `items` names what is counted, plural ("configurations"). `quiet`: never draw.
  explicit Progress(std::string items, bool quiet = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // `done` of `total` so far; the line ends when done reaches total. Callers serialise calls.
  void operator()(uint64_t done, uint64_t total);
  // This reporter as a ProgressFn (which refers to it: it must outlive the calls).
  ProgressFn fn() {
    return [this](uint64_t done, uint64_t total) { (*this)(done, total); };
  }

 private:
  std::string items_;
  bool on_;
  double after_s_;
  bool drawn_ = false;
  double last_s_ = -1;
  std::chrono::steady_clock::time_point t0_;
};

// "41 s", "3 min 20 s", "2 h 05 min": a duration as a person reads it.
std::string duration_text(double seconds);

}  // namespace lumos
