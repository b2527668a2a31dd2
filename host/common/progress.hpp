// The progress of a long command on a terminal: items done of the total, the rate and the time
// left, redrawn on one line of standard error. When standard error is not a terminal (a pipe, a
// file, a test) it prints nothing, so that logs and captured output stay clean.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace lumos {

class Progress {
 public:
  // `items` names what is counted, plural ("configurations").
  explicit Progress(std::string items);
  // `done` of `total` so far; the line ends when done reaches total. Callers serialise calls.
  void operator()(uint64_t done, uint64_t total) const;

 private:
  std::string items_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace lumos
