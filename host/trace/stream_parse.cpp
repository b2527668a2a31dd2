// A gzip trace inflated a piece at a time into a few small buffers and parsed as it comes
// (docs/design.md, "Reading traces"): each piece ends at a cut between two events of
// traceEvents, so that it is a JSON document of its own once a bracket is written at each end.
// The buffers are reused from piece to piece: a large trace's inflated text (35 MB for the
// largest shared trace) and simdjson's index of it are never resident at once, so the kernel need
// not zero fresh pages for them, which cost more than inflating. Anything unexpected (a stream
// zlib refuses, a cut not between two events, an error in a piece) inflates the whole stream
// again and parses it as before, so that every message is the one-buffer parse's.
#include <libdeflate.h>
#include <zlib.h>

#include <simdjson.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/file_bytes.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_cut.hpp"

namespace lumos::trace {
namespace {

using detail::is_json_space;

constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;

// zlib's streaming inflater over one gzip member in memory. Anything but one whole member (a
// corrupt or truncated stream, more members or other data after it) stops it, not ok().
class Inflater {
 public:
  Inflater(const char* data, size_t size) : data_(data), size_(size) {
    ok_ = inflateInit2(&zs_, 15 + 16) == Z_OK;  // 15: the largest window; 16: gzip only
    initialised_ = ok_;
    // zlib's CRC-32 took a third of its time: libdeflate's checks the member instead (check()),
    // a step at a time while the step is in the cache.
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

// One piece as made: its buffer has room for a '[' at t[0] and the text from t[1] on. A piece
// before the last ends at a cut (the comma and the '{' after it); the last at `end`, the end of
// the text. A failed piece: the stream or the text is to be read whole.
struct Piece {
  char* t = nullptr;
  size_t comma = 0, open = 0, end = 0;
  bool last = false, failed = false;
};

// Inflates the stream a piece at a time, each piece into the next of kBuffers buffers in turn, a
// step of at most kStepBytes at a time. The start of the event after a piece's cut is copied to
// the next buffer before the piece is handed out, so that its parser only reads the piece's
// buffer and writes its brackets there.
class PieceMaker {
 public:
  // A piece being parsed, one being made, and two made in between.
  static constexpr size_t kBuffers = 4;
  // Short steps, so that a thread that must wait for another's step waits a few µs, not the
  // time the other thread spends without a core.
  static constexpr size_t kStepBytes = size_t{64} << 10;

  PieceMaker(const char* gz, size_t gz_size, uint64_t max_bytes, size_t piece_bytes)
      : z_(gz, gz_size), max_bytes_(max_bytes), piece_bytes_(piece_bytes), target_(piece_bytes) {}

  // The next piece when this step completes it.
  std::optional<Piece> step();
  uint64_t text_bytes() const { return text_bytes_; }  // once the last piece is made

 private:
  Inflater z_;
  common::ByteBuffer bufs_[kBuffers];
  size_t made_ = 0;
  size_t fill_ = 1;      // the end of what the current buffer holds
  uint64_t before_ = 0;  // text bytes in the pieces made
  uint64_t text_bytes_ = 0;
  uint64_t max_bytes_;
  size_t piece_bytes_;
  size_t target_;       // the current piece's size: larger while no cut is found
  size_t scanned_ = 1;  // no cut has its '{' before this
};

std::optional<Piece> PieceMaker::step() {
  Piece p;
  common::ByteBuffer& b = bufs_[made_ % kBuffers];
  if (b.size() < 1 + target_ + kPadding) b.resize(1 + target_ + kPadding);
  if (fill_ < 1 + target_ && !z_.done() && z_.ok())
    fill_ += z_.read(b.data() + fill_, std::min(kStepBytes, 1 + target_ - fill_));
  if (!z_.ok() || before_ + fill_ - 1 > max_bytes_ || (z_.done() && !z_.check())) {
    p.failed = true;
    return p;
  }
  if (z_.done()) {
    text_bytes_ = before_ + fill_ - 1;
    p.t = b.data();
    p.end = fill_;
    p.last = true;
    ++made_;
    return p;
  }
  if (fill_ < 1 + target_) return std::nullopt;
  const auto cut = last_cut(b.data(), 1, scanned_, fill_);
  if (!cut) {  // no two events in this piece: a larger one
    scanned_ = fill_;
    target_ *= 2;
    return std::nullopt;
  }
  const auto [comma, open] = *cut;
  common::ByteBuffer& next = bufs_[(made_ + 1) % kBuffers];
  const size_t carry = fill_ - open;
  target_ = std::max(piece_bytes_, carry);
  if (next.size() < 1 + target_ + kPadding) next.resize(1 + target_ + kPadding);
  std::memcpy(next.data() + 1, b.data() + open, carry);
  before_ += open - 1;
  fill_ = 1 + carry;
  scanned_ = 1;
  p.t = b.data();
  p.comma = comma;
  p.open = open;
  ++made_;
  return p;
}

// The pieces made by whichever thread is free, a step at a time: the second thread makes them
// ahead of the parse (at most kBuffers - 2 ahead, so that no buffer is written while it is
// parsed), and the parsing thread makes steps itself whenever the piece it needs is not ready,
// so that it never waits on a second thread that has no core for more than one step.
class PieceQueue {
 public:
  PieceQueue(PieceMaker* maker, detail::PartThread* thread) : maker_(maker), thread_(thread) {
    if (thread_) thread_->post([this] { make_ahead(); });
  }
  // Ends the second thread's making before the buffers go.
  ~PieceQueue() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_) thread_->wait();
  }
  PieceQueue(const PieceQueue&) = delete;
  PieceQueue& operator=(const PieceQueue&) = delete;

  // Piece j, once piece j - 1 is parsed (release()).
  Piece take(size_t j) {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(m_);
        if (made_.size() > j) return made_[j];
        // Past the end only when the second thread could not keep a piece: read whole.
        if (ended_) return Piece{nullptr, 0, 0, 0, false, true};
      }
      const std::lock_guard<std::mutex> making(make_m_);
      std::lock_guard<std::mutex> lock(m_);
      if (made_.size() <= j) step();
    }
  }
  void release(size_t j) {
    {
      std::lock_guard<std::mutex> lock(m_);
      released_ = j + 1;
    }
    cv_.notify_all();
  }

 private:
  bool may_make_ahead() const {
    return !ended_ && made_.size() - released_ + 2 <= PieceMaker::kBuffers;
  }
  // One step of the maker, with make_m_ and m_ held: m_ is let go while it inflates.
  void step() {
    Piece p;
    bool complete = false;
    m_.unlock();
    try {
      const std::optional<Piece> made = maker_->step();
      complete = made.has_value();
      if (made) p = *made;
    } catch (...) {
      complete = true;  // no memory for a buffer: the stream is read whole, as before
      p.failed = true;
    }
    m_.lock();
    if (!complete) return;
    made_.push_back(p);
    ended_ = p.last || p.failed;
    cv_.notify_all();
  }
  // On the second thread, where nothing may escape: a piece that cannot be kept (no memory)
  // ends the pieces, and the parse reads the stream whole, as when the maker fails.
  void make_ahead() {
    try {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(m_);
          cv_.wait(lock, [this] { return stop_ || ended_ || may_make_ahead(); });
          if (stop_ || ended_) return;
        }
        const std::lock_guard<std::mutex> making(make_m_);
        std::lock_guard<std::mutex> lock(m_);
        if (!stop_ && may_make_ahead()) step();
      }
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(m_);
        ended_ = true;
      }
      cv_.notify_all();
    }
  }

  PieceMaker* maker_;
  detail::PartThread* thread_;
  std::mutex make_m_;  // held by whichever thread steps the maker
  std::mutex m_;       // the fields below
  std::condition_variable cv_;
  std::vector<Piece> made_;
  size_t released_ = 0;
  bool ended_ = false, stop_ = false;
};

// The text in pieces of about `piece_bytes`, or nothing when it must be read as a whole: `*whole`
// is then set when the stream ended before any cut, the whole text in `whole_piece` (its parse
// as one document is the old path's), and stays false otherwise.
std::optional<EventTable> parse_pieces(const std::string& label, size_t size_hint,
                                       detail::PartThread* thread, PieceMaker* maker,
                                       Piece* whole_piece, bool* whole) {
  detail::PieceLoader loader(label, size_hint);
  PieceQueue queue(maker, thread);
  for (size_t j = 0;; ++j) {
    const Piece p = queue.take(j);
    if (p.failed) return std::nullopt;
    char* t = p.t;
    if (p.last && j == 0) {
      *whole_piece = p;
      *whole = true;
      return std::nullopt;
    }
    if (p.last) {
      const auto close = detail::find_events_close(t, 1, p.end);
      if (!close) return std::nullopt;
      t[0] = '[';
      if (!loader.events(t, close->first + 1)) return std::nullopt;
      if (close->second < p.end) {
        t[close->second] = '{';
        loader.tail(t + close->second, p.end - close->second);
      }
      return loader.finish(maker->text_bytes());
    }
    if (j == 0) {
      t[p.comma] = ']';
      t[p.comma + 1] = '}';
      if (!loader.head(t + 1, p.comma + 1)) return std::nullopt;
    } else {
      t[0] = '[';
      t[p.comma] = ']';
      if (!loader.events(t, p.comma + 1)) return std::nullopt;
    }
    queue.release(j);
  }
}

}  // namespace

namespace detail {

EventTable parse_gzip(const char* gz, size_t gz_size, const std::string& label, uint64_t max_bytes,
                      size_t piece_bytes, size_t split_min_bytes, PartThread* thread,
                      const std::function<void(char*, size_t)>& fault_in, GzipParse* how) {
  GzipParse ignored;
  GzipParse& went = how ? *how : ignored;
  {
    PieceMaker maker(gz, gz_size, max_bytes, piece_bytes);
    Piece whole_piece;
    bool whole = false;
    try {
      // The trailer's claim sizes reservations: a forged one is held to the limit on the text.
      const size_t hint =
          static_cast<size_t>(std::min<uint64_t>(common::gzip_size_claim(gz, gz_size), max_bytes));
      std::optional<EventTable> table =
          parse_pieces(label, hint, thread, &maker, &whole_piece, &whole);
      if (table) {
        went = GzipParse::kPieces;
        return std::move(*table);
      }
    } catch (...) {
      whole = false;  // the message, if any, comes from the parse of the whole
    }
    if (whole) {
      // The stream ended before any cut: the whole text is in the piece's buffer.
      went = GzipParse::kOnePiece;
      std::memset(whole_piece.t + whole_piece.end, 0, kPadding);
      return parse_trace_json(whole_piece.t + 1, whole_piece.end - 1, label);
    }
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
