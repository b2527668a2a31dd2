// Reads input files into memory: only regular files (a FIFO would hang, a folder or device has
// no size to read), at most a byte limit, inflating gzip when the data starts with the gzip
// magic. The buffer keeps simdjson's required padding after the data.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace lumos::common {

// The default for --max-trace-bytes: simdjson parses documents of at most 4 GiB - 1, so a
// larger trace would fail after it was read or inflated.
inline constexpr uint64_t kDefaultMaxTraceBytes = uint64_t{4} << 30;

// The process-wide limit every trace and graph read uses unless it is given one; the CLI sets it
// from --max-trace-bytes once, so that readers deep in a command (every rank of a folder) obey it
// without each call passing it on.
uint64_t max_trace_bytes();
void set_max_trace_bytes(uint64_t max_bytes);

// A malloc'd buffer that grows with realloc and never zeroes what it allocates: only the bytes
// written become resident, and on Linux a large block grows by remapping pages, not copying.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(ByteBuffer&& o) noexcept;
  ByteBuffer& operator=(ByteBuffer&& o) noexcept;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ~ByteBuffer();
  char* data() { return p_; }
  const char* data() const { return p_; }
  size_t size() const { return n_; }  // allocated bytes, initialised or not
  void resize(size_t n);              // keeps the first min(n, size()) bytes; throws bad_alloc

  // The largest block a ByteBuffer of this thread has held since the last reset: how tests and
  // benchmarks check that a read sized its buffer by the data, even when the read failed.
  static size_t thread_peak_bytes();
  static void reset_thread_peak();

 private:
  char* p_ = nullptr;
  size_t n_ = 0;
};

struct FileBytes {
  ByteBuffer data;  // size() = content + padding, padding zeroed
  size_t size = 0;  // content bytes (uncompressed)
  bool was_gzip = false;
};

// Throws InputError naming the path unless it is a regular file: "is a folder; expected
// `expected`", or a FIFO, device or socket. A missing file is "cannot open file (...)", an
// empty path "an empty path, expected `expected`".
void expect_regular_file(const std::string& path, const std::string& expected = "a trace file");

// The bytes of a regular file as they are (no inflation); `path` "-" reads standard input to its
// end. Throws InputError naming the file and the limit when it holds more than `max_bytes`, and
// as expect_regular_file does.
// `limit_of` says whose limit `max_bytes` is in that message.
inline constexpr const char* kTraceLimit = "--max-trace-bytes (raise it to read this input)";
FileBytes read_regular_file(const std::string& path, size_t padding,
                            uint64_t max_bytes = max_trace_bytes(),
                            const std::string& expected = "a trace file",
                            const std::string& limit_of = kTraceLimit);

// The first `n` bytes of `path` (fewer when it is shorter), or nothing when it is not a regular
// file or cannot be opened: how a reader sniffs a format without waiting on a FIFO.
std::optional<std::string> regular_file_prefix(const std::string& path, size_t n);

// read_regular_file, then inflated when it is gzip; the limit applies to the inflated size too.
// Throws InputError naming the file on a truncated or corrupt gzip stream.
// `on_buffer`, when given, is called as gunzip_bytes calls it; `expected` names the input as
// read_regular_file does.
FileBytes read_file_bytes(const std::string& path, size_t padding,
                          uint64_t max_bytes = max_trace_bytes(),
                          const std::string& limit_of = kTraceLimit,
                          const std::function<void(char*, size_t)>& on_buffer = {},
                          const std::string& expected = "a trace file");

// Inflates an in-memory gzip stream (one or more members). `what` names the source in messages.
// The size trailer is not trusted: the output buffer starts at 8 times the compressed size (at
// least 64 KiB), or at the last trailer's size when a stream of this size could inflate to it
// (1032 to 1 at most, deflate's limit), and doubles while the data needs more; of it only what
// was written is resident, and it never holds more than `max_bytes`
// (then InputError names the limit and `limit_of`). A buffer the machine cannot give is an
// InputError saying so ("out of memory while inflating"), not std::bad_alloc.
// `on_buffer`, when given, is called with the output buffer's start and size (without the
// padding) when it is allocated before anything was inflated into it (once, unless the first
// member does not fit).
FileBytes gunzip_bytes(const char* data, size_t size, size_t padding, const std::string& what,
                       uint64_t max_bytes = max_trace_bytes(),
                       const std::string& limit_of = kTraceLimit,
                       const std::function<void(char*, size_t)>& on_buffer = {});

bool looks_gzip(const char* data, size_t size);

// The size a gzip stream's last trailer claims, when a stream of `size` compressed bytes could
// inflate to it (1032 to 1 at most); else 0. A hint, never a bound.
uint64_t gzip_size_claim(const char* data, size_t size);

// "512 MiB", "4 GiB", "123 bytes": how messages name a limit.
std::string describe_bytes(uint64_t n);

}  // namespace lumos::common
