#include "common/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace lumos {

namespace {

constexpr double kDefaultAfterS = 2.0;
constexpr double kRedrawS = 0.1;  // a terminal redrawn faster than it is read only costs time

double delay_s() {
  const char* env = std::getenv("LUMOS_PROGRESS_AFTER_S");
  if (env == nullptr || *env == '\0') return kDefaultAfterS;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  return end != env && std::isfinite(v) && v >= 0 ? v : kDefaultAfterS;
}

}  // namespace

std::string duration_text(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  char buf[48];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%ld s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, s / 60 % 60);
  return buf;
}

Progress::Progress(std::string items, bool quiet)
    : items_(std::move(items)),
      on_(!quiet && isatty(STDERR_FILENO) != 0),
      after_s_(delay_s()),
      t0_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  // Work that stopped early (an error) ends the line, so that the error starts its own.
  if (on_ && drawn_) std::fprintf(stderr, "\n");
}

void Progress::operator()(uint64_t done, uint64_t total) {
  if (!on_ || total == 0) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  const bool last = done >= total;
  // Nothing before the delay; after it, a redraw at most every kRedrawS, and the last line once
  // (also when the whole run was one step that outlasted the delay).
  if (last ? !drawn_ && s < after_s_ : (s < after_s_ || s - last_s_ < kRedrawS)) return;
  last_s_ = s;
  drawn_ = true;
  const double rate = s > 0 ? static_cast<double>(done) / s : 0.0;
  const std::string tail =
      last ? "done in " + duration_text(s)
           : (done > 0 ? duration_text(s * static_cast<double>(total - done) / done) + " left"
                       : std::string("time left unknown"));
  std::fprintf(stderr, "\r  %llu / %llu %s, %.*f/s, %s   ", static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), items_.c_str(), rate < 10 ? 1 : 0, rate,
               tail.c_str());
  if (last) std::fprintf(stderr, "\n"), on_ = false;
  std::fflush(stderr);
}

}  // namespace lumos
