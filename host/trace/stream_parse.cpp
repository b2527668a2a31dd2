// A gzip trace inflated a piece at a time into one small buffer and parsed as it comes
// (docs/design.md, "Reading traces"): each piece ends at a cut between two events of
// traceEvents, so that it is a JSON document of its own once a bracket is written at each end.
// The buffer is reused from piece to piece: a large trace's inflated text (35 MB for the largest
// shared trace) and simdjson's index of it are never resident at once, so the kernel need not
// zero fresh pages for them, which cost more than inflating. Anything unexpected (a stream
// zlib refuses, a cut not between two events, an error in a piece) inflates the whole stream
// again and parses it as before, so that every message is the one-buffer parse's.
#include <libdeflate.h>
#include <zlib.h>

#include <simdjson.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "common/file_bytes.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_cut.hpp"

namespace lumos::trace {
namespace {

constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;

// zlib's streaming inflater over one gzip member in memory. Anything but one whole member (a
// corrupt or truncated stream, more members or other data after it) stops it, not ok().
class Inflater {
 public:
  Inflater(const char* data, size_t size) : data_(data), size_(size) {
    ok_ = inflateInit2(&zs_, 15 + 16) == Z_OK;  // 15: the largest window; 16: gzip only
    initialised_ = ok_;
    // zlib's CRC-32 took a third of its time: libdeflate's checks the member instead (check()),
    // a piece at a time while the piece is in the cache.
    if (ok_) ok_ = inflateValidate(&zs_, 0) == Z_OK;
  }
  ~Inflater() {
    if (initialised_) inflateEnd(&zs_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  bool ok() const { return ok_; }
  bool done() const { return done_; }
  // Once done: whether the member's trailer holds the CRC-32 and the size (modulo 2^32) of what
  // was inflated, as zlib would have checked them.
  bool check() const {
    if (!done_ || !ok_ || size_ < 8) return false;
    auto le32 = [this](size_t at) {
      uint32_t v = 0;
      for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(data_[at + i]);
      return v;
    };
    return le32(size_ - 8) == crc_ && le32(size_ - 4) == static_cast<uint32_t>(total_);
  }

  // Inflates up to n bytes into out; returns how many.
  size_t read(char* out, size_t n) {
    const size_t got = inflate_into(out, n);
    crc_ = libdeflate_crc32(crc_, out, got);
    total_ += got;
    return got;
  }

 private:
  size_t inflate_into(char* out, size_t n) {
    const auto want = static_cast<uInt>(std::min<size_t>(n, UINT_MAX));
    zs_.next_out = reinterpret_cast<Bytef*>(out);
    zs_.avail_out = want;
    while (ok_ && !done_ && zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && in_pos_ < size_) {
        const size_t feed = std::min<size_t>(size_ - in_pos_, size_t{1} << 30);
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data_ + in_pos_));
        zs_.avail_in = static_cast<uInt>(feed);
        in_pos_ += feed;
      }
      const int r = inflate(&zs_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        done_ = true;
        ok_ = zs_.avail_in == 0 && in_pos_ == size_;
      } else if (r != Z_OK) {
        ok_ = false;  // corrupt, or truncated (Z_BUF_ERROR with all input used)
      }
    }
    return want - zs_.avail_out;
  }

  const char* data_;
  size_t size_;
  size_t in_pos_ = 0;
  uint32_t crc_ = 0;
  uint64_t total_ = 0;
  z_stream zs_{};
  bool ok_ = false, initialised_ = false, done_ = false;
};

bool is_json_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The last cut in the text whose '{' lies in [from, to): a ',' after a '}' and before that '{',
// with a line break between the comma and the '{' (never inside a JSON string; the pieces'
// parses check that the comma is one of traceEvents'). Looks no further back than `low`.
// Returns the comma's position and the '{''s.
std::optional<std::pair<size_t, size_t>> last_cut(const char* t, size_t low, size_t from,
                                                  size_t to) {
  for (size_t k = to; k-- > from;) {
    if (t[k] != '{') continue;
    size_t j = k;
    bool line_break = false;
    while (j > low && is_json_space(t[j - 1])) line_break |= t[--j] == '\n';
    if (!line_break || j == low || t[j - 1] != ',') continue;
    const size_t comma = j - 1;
    size_t b = comma;
    while (b > low && is_json_space(t[b - 1])) --b;
    if (b == low || t[b - 1] != '}') continue;
    return std::make_pair(comma, k);
  }
  return std::nullopt;
}

// The text in pieces of about `piece_bytes`, or nothing when it must be read as a whole:
// `whole` then holds the text when the stream inflated to fewer bytes than one piece (its
// parse as one document is the old path's), else stays empty.
std::optional<EventTable> parse_pieces(const char* gz, size_t gz_size, const std::string& label,
                                       uint64_t max_bytes, size_t piece_bytes,
                                       common::ByteBuffer* whole, size_t* whole_size) {
  Inflater z(gz, gz_size);
  if (!z.ok()) return std::nullopt;
  detail::PieceLoader loader(label, common::gzip_size_claim(gz, gz_size));
  // buf[0] is for the '[' an events piece starts with; the text from buf[1] on.
  common::ByteBuffer buf;
  size_t fill = 1, scanned = 1, target = piece_bytes;
  uint64_t parsed = 0;  // text bytes before buf[1]
  bool have_head = false;
  for (;;) {
    if (buf.size() < 1 + target + kPadding) buf.resize(1 + target + kPadding);
    while (fill < 1 + target && !z.done() && z.ok())
      fill += z.read(buf.data() + fill, 1 + target - fill);
    if (!z.ok() || parsed + fill - 1 > max_bytes) return std::nullopt;
    if (z.done()) {
      if (!z.check()) return std::nullopt;
      break;
    }
    const auto cut = last_cut(buf.data(), 1, scanned, fill);
    if (!cut) {  // no two events in this piece: a larger one
      scanned = fill;
      target *= 2;
      continue;
    }
    char* t = buf.data();
    const auto [comma, open] = *cut;
    if (!have_head) {
      t[comma] = ']';
      t[comma + 1] = '}';
      if (!loader.head(t + 1, comma + 1)) return std::nullopt;
      have_head = true;
    } else {
      t[0] = '[';
      t[comma] = ']';
      if (!loader.events(t, comma + 1)) return std::nullopt;
    }
    parsed += open - 1;
    std::memmove(t + 1, t + open, fill - open);
    fill = 1 + fill - open;
    scanned = 1;
    target = std::max(piece_bytes, fill);
  }
  char* t = buf.data();
  if (!have_head) {
    std::memset(t + fill, 0, kPadding);
    *whole = std::move(buf);
    *whole_size = fill - 1;
    return std::nullopt;
  }
  const auto close = detail::find_events_close(t, 1, fill);
  if (!close) return std::nullopt;
  t[0] = '[';
  if (!loader.events(t, close->first + 1)) return std::nullopt;
  if (close->second < fill) {
    t[close->second] = '{';
    loader.tail(t + close->second, fill - close->second);
  }
  return loader.finish(parsed + fill - 1);
}

}  // namespace

namespace detail {

EventTable parse_gzip(const char* gz, size_t gz_size, const std::string& label, uint64_t max_bytes,
                      size_t piece_bytes, size_t split_min_bytes, PartThread* thread,
                      const std::function<void(char*, size_t)>& fault_in, GzipParse* how) {
  GzipParse ignored;
  GzipParse& went = how ? *how : ignored;
  common::ByteBuffer whole;
  size_t whole_size = 0;
  try {
    std::optional<EventTable> table =
        parse_pieces(gz, gz_size, label, max_bytes, piece_bytes, &whole, &whole_size);
    if (table) {
      went = GzipParse::kPieces;
      return std::move(*table);
    }
  } catch (...) {
    whole = common::ByteBuffer();  // the message, if any, comes from the parse of the whole
  }
  if (whole.size() > 0) {
    // Fewer bytes than a piece: the text is already whole in the buffer.
    went = GzipParse::kOnePiece;
    return parse_trace_json(whole.data() + 1, whole_size, label);
  }
  went = GzipParse::kWhole;
  common::FileBytes fb =
      common::gunzip_bytes(gz, gz_size, kPadding, label, max_bytes, common::kTraceLimit, fault_in);
  return parse_split(fb.data.data(), fb.size, label, split_min_bytes, nullptr, thread);
}

}  // namespace detail

EventTable parse_gzip_trace(const char* data, size_t size, const std::string& label,
                            uint64_t max_bytes, size_t piece_bytes, GzipParse* how) {
  return detail::parse_gzip(data, size, label, max_bytes, piece_bytes, kSplitParseMinBytes, nullptr,
                            {}, how);
}

}  // namespace lumos::trace
