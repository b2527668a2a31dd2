#include "common/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace lumos {

Progress::Progress(std::string items)
    : items_(std::move(items)),
      on_(isatty(STDERR_FILENO) != 0),
      t0_(std::chrono::steady_clock::now()) {}

void Progress::operator()(uint64_t done, uint64_t total) const {
  if (!on_ || total == 0) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  const double eta = done > 0 ? s * static_cast<double>(total - done) / done : 0;
  std::fprintf(stderr, "\r  %llu / %llu %s, %.0f/s, %.0f s left   ",
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
               items_.c_str(), s > 0 ? done / s : 0.0, eta);
  if (done == total) std::fprintf(stderr, "\n");
}

}  // namespace lumos
