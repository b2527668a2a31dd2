// Bytes of work held at once by workers that build large things (graphs): a worker waits until
// its share fits beside the others'; one holder always runs, so the work cannot stall.
#pragma once
#include <condition_variable>
#include <mutex>

namespace lumos {

class MemoryBudget {
 public:
  explicit MemoryBudget(double bytes) : limit_(bytes) {}
  class Hold {
   public:
    Hold(MemoryBudget& b, double bytes) : b_(b), bytes_(bytes) {
      std::unique_lock<std::mutex> lock(b_.m_);
      b_.cv_.wait(lock, [&] { return b_.used_ == 0 || b_.used_ + bytes_ <= b_.limit_; });
      b_.used_ += bytes_;
    }
    ~Hold() {
      {
        std::lock_guard<std::mutex> lock(b_.m_);
        b_.used_ -= bytes_;
      }
      b_.cv_.notify_all();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    MemoryBudget& b_;
    double bytes_;
  };

 private:
  std::mutex m_;
  std::condition_variable cv_;
  double used_ = 0;
  double limit_;
};

}  // namespace lumos
