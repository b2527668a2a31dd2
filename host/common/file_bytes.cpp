#include "common/file_bytes.hpp"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "common/error.hpp"
#include "common/huge_pages.hpp"

namespace lumos::common {
namespace {

std::atomic<uint64_t> g_max_trace_bytes{kDefaultMaxTraceBytes};
thread_local size_t t_peak_buffer_bytes = 0;

std::string over_limit(const std::string& what, const std::string& amount, uint64_t max_bytes,
                       const std::string& limit_of = kTraceLimit) {
  return what + ": " + amount + " more than the " + describe_bytes(max_bytes) + " limit of " +
         limit_of;
}

// Why `st` is not a regular file, in words for "PATH is ...; expected ...".
std::string kind_of(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

void expect_regular(const std::string& path, const struct stat& st, const std::string& expected) {
  if (!S_ISREG(st.st_mode))
    throw InputError(path + " is " + kind_of(st) + "; expected " + expected);
}

// Appends the rest of `fd` (standard input) to `out`, growing it geometrically up to the limit.
void read_stream(int fd, const std::string& what, size_t padding, uint64_t max_bytes,
                 const std::string& limit_of, FileBytes& out) {
  // One byte past the limit tells a stream of exactly the limit from a longer one.
  const uint64_t most = max_bytes == UINT64_MAX ? max_bytes : max_bytes + 1;
  size_t cap = static_cast<size_t>(std::min<uint64_t>(1 << 16, most));
  for (;;) {
    if (out.size == cap) {
      LUMOS_EXPECT(cap < most, over_limit(what, "holds", max_bytes, limit_of));
      cap = static_cast<size_t>(std::min<uint64_t>(uint64_t{cap} * 2, most));
    }
    if (out.data.size() < cap + padding) out.data.resize(cap + padding);
    const ssize_t n = ::read(fd, out.data.data() + out.size, cap - out.size);
    if (n < 0 && errno == EINTR) continue;
    LUMOS_EXPECT(n >= 0, what + ": cannot read (" + std::strerror(errno) + ")");
    if (n == 0) break;
    out.size += static_cast<size_t>(n);
  }
  LUMOS_EXPECT(out.size <= max_bytes, over_limit(what, "holds", max_bytes, limit_of));
}

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

void finish(FileBytes& out, size_t padding) {
  out.data.resize(out.size + padding);
  // An empty file without padding has no buffer at all, and memset must not see a null pointer.
  if (padding > 0) std::memset(out.data.data() + out.size, 0, padding);
}

}  // namespace

uint64_t max_trace_bytes() {
  return g_max_trace_bytes.load(std::memory_order_relaxed);
}

void set_max_trace_bytes(uint64_t max_bytes) {
  g_max_trace_bytes.store(max_bytes, std::memory_order_relaxed);
}

ByteBuffer::ByteBuffer(ByteBuffer&& o) noexcept : p_(o.p_), n_(o.n_) {
  o.p_ = nullptr;
  o.n_ = 0;
}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& o) noexcept {
  if (this != &o) {
    std::free(p_);
    p_ = o.p_;
    n_ = o.n_;
    o.p_ = nullptr;
    o.n_ = 0;
  }
  return *this;
}

ByteBuffer::~ByteBuffer() {
  std::free(p_);
}

void ByteBuffer::resize(size_t n) {
  if (n == n_) return;
  // realloc(p, 0) may free and return null: keep one byte so data() stays valid.
  void* q = std::realloc(p_, std::max<size_t>(n, 1));
  if (q == nullptr) throw std::bad_alloc();
  p_ = static_cast<char*>(q);
  n_ = n;
  advise_huge_pages(p_, n_);
  t_peak_buffer_bytes = std::max(t_peak_buffer_bytes, n);
}

size_t ByteBuffer::thread_peak_bytes() {
  return t_peak_buffer_bytes;
}

void ByteBuffer::reset_thread_peak() {
  t_peak_buffer_bytes = 0;
}

std::string describe_bytes(uint64_t n) {
  static const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = static_cast<double>(n);
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[32];
  if (u == 0 || v == static_cast<double>(static_cast<uint64_t>(v)))
    std::snprintf(buf, sizeof(buf), "%.0f %s", v, kUnits[u]);
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[u]);
  return buf;
}

// The size a gzip stream's last trailer claims, when a stream of `size` compressed bytes could
// inflate to it: deflate encodes at most 258 bytes in two bits or so (1032 to 1), so a larger
// claim is forged or not a trailer, and is ignored (0). A claim that passes is still only the
// first size tried: the buffer grows as ever when the data needs more.
uint64_t gzip_size_claim(const char* data, size_t size) {
  if (size < 18) return 0;
  uint32_t isize = 0;
  for (int i = 3; i >= 0; --i)
    isize = (isize << 8) | static_cast<unsigned char>(data[size - 4 + i]);
  return isize <= uint64_t{size} * 1032 ? isize : 0;
}

bool looks_gzip(const char* data, size_t size) {
  return size >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

FileBytes gunzip_bytes(const char* data, size_t size, size_t padding, const std::string& what,
                       uint64_t max_bytes, const std::string& limit_of,
                       const std::function<void(char*, size_t)>& on_buffer) {
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  LUMOS_EXPECT(d != nullptr, what + ": out of memory creating the gzip decompressor");
  FileBytes out;
  out.was_gzip = true;
  // Each member's size trailer (ISIZE) is not trusted: forged or misread (text after the stream,
  // a truncated file) it would size the buffer at up to 4 GiB. libdeflate inflates a member in
  // one call, so the buffer (for all members so far) starts at a few times the compressed size
  // and doubles while a member does not fit; a member that did not fit is inflated again.
  // A plausible trailer of a one-member stream (what profilers write) sizes the first try
  // exactly, which saves inflating the start of the stream again at each doubling.
  const uint64_t first =
      std::max<uint64_t>({uint64_t{size} * 8, uint64_t{1} << 16, gzip_size_claim(data, size)});
  size_t cap = static_cast<size_t>(std::min(first, max_bytes));
  size_t in_pos = 0;
  while (in_pos < size) {
    const std::string at = " at byte " + std::to_string(in_pos);
    LUMOS_EXPECT(in_pos == 0 || looks_gzip(data + in_pos, size - in_pos),
                 what + ": data after the gzip stream" + at + " is not gzip");
    LUMOS_EXPECT(size - in_pos >= 18,
                 what + ": truncated gzip stream" + at + " (member shorter than a header)");
    for (;;) {
      if (out.data.size() < cap + padding) {
        try {
          out.data.resize(cap + padding);
        } catch (const std::bad_alloc&) {
          // A limit near the machine's memory (or the process's) is reached before the limit.
          throw InputError(what + ": out of memory while inflating to " + describe_bytes(cap) +
                           " (limit " + describe_bytes(max_bytes) +
                           (limit_of == kTraceLimit ? " of --max-trace-bytes" : "") + ")");
        }
        if (on_buffer && out.size == 0 && in_pos == 0) on_buffer(out.data.data(), cap);
      }
      size_t in_used = 0, out_used = 0;
      const libdeflate_result r = libdeflate_gzip_decompress_ex(
          d.get(), data + in_pos, size - in_pos, out.data.data() + out.size, cap - out.size,
          &in_used, &out_used);
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
        LUMOS_EXPECT(cap < max_bytes, over_limit(what, "inflates to", max_bytes, limit_of));
        cap = static_cast<size_t>(std::min<uint64_t>(uint64_t{cap} * 2, max_bytes));
        continue;
      }
      LUMOS_EXPECT(r == LIBDEFLATE_SUCCESS,
                   what + ": truncated or corrupt gzip stream (member starting" + at + ")");
      in_pos += in_used;
      out.size += out_used;
      break;
    }
  }
  finish(out, padding);
  return out;
}

void expect_regular_file(const std::string& path, const std::string& expected) {
  if (path.empty()) throw InputError("an empty path, expected " + expected);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": cannot open file (" + std::strerror(errno) + ")");
  expect_regular(path, st, expected);
}

FileBytes read_regular_file(const std::string& path, size_t padding, uint64_t max_bytes,
                            const std::string& expected, const std::string& limit_of) {
  FileBytes out;
  if (path == "-") {
    read_stream(STDIN_FILENO, "<stdin>", padding, max_bytes, limit_of, out);
    finish(out, padding);
    return out;
  }
  // Checked before opening, since opening a FIFO waits for a writer and opening a device may act
  // on it; checked again on what was opened, in case the path changed in between.
  expect_regular_file(path, expected);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open file (" + std::strerror(errno) + ")");
  const FdCloser closer{fd};
  struct stat st {};
  LUMOS_EXPECT(::fstat(fd, &st) == 0, path + ": cannot read file (" + std::strerror(errno) + ")");
  expect_regular(path, st, expected);
  const uint64_t n = static_cast<uint64_t>(st.st_size);
  LUMOS_EXPECT(n <= max_bytes,
               over_limit(path, "holds " + describe_bytes(n) + ",", max_bytes, limit_of));
  out.data.resize(static_cast<size_t>(n) + padding);
  while (out.size < n) {
    const ssize_t got = ::read(fd, out.data.data() + out.size, static_cast<size_t>(n) - out.size);
    if (got < 0 && errno == EINTR) continue;
    LUMOS_EXPECT(got >= 0, path + ": cannot read file (" + std::strerror(errno) + ")");
    if (got == 0) break;  // the file shrank while it was read: take what is there
    out.size += static_cast<size_t>(got);
  }
  finish(out, padding);
  return out;
}

std::optional<std::string> regular_file_prefix(const std::string& path, size_t n) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const FdCloser closer{fd};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, out.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

FileBytes read_file_bytes(const std::string& path, size_t padding, uint64_t max_bytes,
                          const std::string& limit_of,
                          const std::function<void(char*, size_t)>& on_buffer,
                          const std::string& expected) {
  FileBytes raw = read_regular_file(path, padding, max_bytes, expected, limit_of);
  if (!looks_gzip(raw.data.data(), raw.size)) return raw;
  const std::string what = path == "-" ? "<stdin>" : path;
  return gunzip_bytes(raw.data.data(), raw.size, padding, what, max_bytes, limit_of, on_buffer);
}

}  // namespace lumos::common
