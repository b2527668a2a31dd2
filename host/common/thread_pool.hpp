// The one way lumos runs work on all cores: `threads` copies of a worker (this thread is one of
// them) that pull their own work, e.g. from an atomic counter. The first exception a worker throws
// is rethrown here once all have stopped.
#pragma once
#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lumos {

// `requested` threads, or all cores when it is 0 or negative.
inline unsigned worker_threads(int requested) {
  return requested > 0 ? static_cast<unsigned>(requested)
                       : std::max(1u, std::thread::hardware_concurrency());
}

template <class Worker>
void run_workers(unsigned threads, Worker&& worker) {
  std::exception_ptr failure;
  std::mutex m;
  auto guarded = [&]() {
    try {
      worker();
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < std::max(1u, threads); ++k) pool.emplace_back(guarded);
  guarded();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace lumos
