// Shared by every .cu file: the one CUDA error check (its handler is in cuda_check.cu), the
// launcher precondition check, ceil_div, the NVTX range opened by launchers, and RAII owners of
// a stream and of device memory. Never included by host code (see the .hpp headers).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if __has_include(<nvtx3/nvToolsExt.h>) && !defined(LUMOS_DISABLE_NVTX)
#include <nvtx3/nvToolsExt.h>
#define LUMOS_HAS_NVTX 1
#endif

namespace lumos::cuda {

// The one handler of failed CUDA runtime calls: throws std::runtime_error naming the error, the
// statement and where it was (never exits; main() decides).
[[noreturn]] void cuda_fail(cudaError_t err, const char* stmt, const char* func, const char* file,
                            int line);

}  // namespace lumos::cuda

// Evaluates a CUDA runtime call once and hands a failure to cuda_fail().
#define LUMOS_CUDA_CHECK(stmt)                                                   \
  do {                                                                           \
    const cudaError_t lumos_err_ = (stmt);                                       \
    if (lumos_err_ != cudaSuccess)                                               \
      ::lumos::cuda::cuda_fail(lumos_err_, #stmt, __func__, __FILE__, __LINE__); \
  } while (0)

// A launcher's precondition: its caller's bug, not bad input, so std::logic_error.
#define LUMOS_CUDA_REQUIRE(cond, msg)                                          \
  do {                                                                         \
    if (!(cond)) throw std::logic_error(std::string(__func__) + ": " + (msg)); \
  } while (0)

namespace lumos::cuda {

// Blocks of `b` threads covering `a` items.
constexpr uint32_t ceil_div(uint32_t a, uint32_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// Opens one named range for the lifetime of the object (host side only).
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
#ifdef LUMOS_HAS_NVTX
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#ifdef LUMOS_HAS_NVTX
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

// A non-blocking stream, destroyed with its owner. The destructor first waits for the work
// queued on it (errors ignored: it may run while an exception unwinds), so nothing queued
// outlives the buffers it reads or writes.
// A pair of CUDA events around work on one stream: elapsed_s() waits for the second.
class EventTimer {
 public:
  EventTimer() {
    LUMOS_CUDA_CHECK(cudaEventCreate(&start_));
    LUMOS_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start(cudaStream_t s) { LUMOS_CUDA_CHECK(cudaEventRecord(start_, s)); }
  void stop(cudaStream_t s) { LUMOS_CUDA_CHECK(cudaEventRecord(stop_, s)); }
  double elapsed_s() const {
    LUMOS_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    LUMOS_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

class Stream {
 public:
  Stream() { LUMOS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }
  void synchronize() const { LUMOS_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// `size` elements of T in device memory, freed with the owner (cudaFree waits for the device,
// so no kernel still uses it). Empty buffers hold no allocation (get() is null).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t size) : size_(size) {
    if (size_ > 0) LUMOS_CUDA_CHECK(cudaMalloc(&ptr_, size_ * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_) (void)cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) (void)cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  size_t size() const { return size_; }

  // Copies h[0, n) to elements [0, n) on `stream` (n <= size()).
  void upload(const T* h, size_t n, cudaStream_t stream) {
    LUMOS_CUDA_REQUIRE(n <= size_, "upload past the end of a device buffer");
    if (n > 0)
      LUMOS_CUDA_CHECK(cudaMemcpyAsync(ptr_, h, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  // Copies elements [0, n) to h on `stream`; h must stay alive until the stream is synchronized.
  void download(T* h, size_t n, cudaStream_t stream) const {
    LUMOS_CUDA_REQUIRE(n <= size_, "download past the end of a device buffer");
    if (n > 0)
      LUMOS_CUDA_CHECK(cudaMemcpyAsync(h, ptr_, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

// A device copy of `h`, queued on `stream` (h may be freed once this returns).
template <typename T>
DeviceBuffer<T> to_device(const std::vector<T>& h, cudaStream_t stream) {
  DeviceBuffer<T> d(h.size());
  d.upload(h.data(), h.size(), stream);
  return d;
}

}  // namespace lumos::cuda
