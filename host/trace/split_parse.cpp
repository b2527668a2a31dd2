// Where a large trace is cut for its parse on two threads (docs/design.md, "Reading traces"):
// between two events of traceEvents near the middle of the text, with the brackets that make its
// parts documents of their own written in for the parse and put back after it. The parts are
// parsed in kineto_loader.cpp (detail::parse_trace_parts), the later one on a PartThread. Any
// failure, or a cut that is not between two events of traceEvents, parses the whole text again on
// one thread, so that the table and every message are those of parse_trace_json.
#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

#include "common/error.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_cut.hpp"

namespace lumos::trace {

namespace {

using detail::is_json_space;
using detail::TraceCut;

// The first `},` + spaces holding a line break + `{` from 9/16 of the text on: a line break is
// never inside a JSON string, and the parts' parses check that the comma is one of traceEvents'.
// The head is the larger part as the later part's thread starts later and its memory is fresh
// (12 against 15 ms for halves of the largest shared trace). Returns the comma and the byte
// before the `{`.
std::optional<std::pair<size_t, size_t>> find_comma(const char* json, size_t begin, size_t size) {
  constexpr size_t kSearchBytes = size_t{1} << 20;
  const size_t from = begin + (size - begin) / 16 * 9;
  const size_t end = std::min(size, from + kSearchBytes);
  for (size_t c = from; c < end; ++c) {
    const void* hit = std::memchr(json + c, ',', end - c);
    if (hit == nullptr) break;
    c = static_cast<size_t>(static_cast<const char*>(hit) - json);
    size_t before = c;
    while (before > begin && is_json_space(json[before - 1])) --before;
    if (before == begin || json[before - 1] != '}') continue;
    size_t after = c + 1;
    bool line_break = false;
    while (after < size && is_json_space(json[after])) line_break |= json[after++] == '\n';
    if (line_break && after >= c + 3 && after < size && json[after] == '{')
      return std::make_pair(c, after - 1);
  }
  return std::nullopt;
}

std::optional<TraceCut> find_cut(const char* json, size_t begin, size_t size) {
  const auto comma = find_comma(json, begin, size);
  if (!comma) return std::nullopt;
  const auto close = detail::find_events_close(json, comma->second + 2, size);
  if (!close) return std::nullopt;
  return TraceCut{comma->first, comma->second, close->first, close->second};
}

// Writes the cut's brackets into the text and puts its bytes back when it goes.
class CutBrackets {
 public:
  CutBrackets(char* json, size_t size, const TraceCut& cut)
      : json_(json),
        at_{cut.comma, cut.comma + 1, cut.open, cut.tail},
        n_(cut.tail < size ? 4 : 3) {
    const char brackets[4] = {']', '}', '[', '{'};
    for (int k = 0; k < n_; ++k) {
      saved_[k] = json[at_[k]];
      json[at_[k]] = brackets[k];
    }
  }
  ~CutBrackets() {
    for (int k = 0; k < n_; ++k) json_[at_[k]] = saved_[k];
  }
  CutBrackets(const CutBrackets&) = delete;
  CutBrackets& operator=(const CutBrackets&) = delete;

 private:
  char* json_;
  size_t at_[4];
  int n_;
  char saved_[4] = {};
};

}  // namespace

namespace detail {

// traceEvents' closing bracket, looked for near the end: the last ']' after a '}' (an event's
// end) that is followed by ',' or the document's closing '}'.
std::optional<std::pair<size_t, size_t>> find_events_close(const char* json, size_t low,
                                                           size_t size) {
  size_t last = size;
  while (last > low && is_json_space(json[last - 1])) --last;
  if (last == low || json[last - 1] != '}') return std::nullopt;
  const size_t root_close = last - 1;
  constexpr size_t kTailBytes = size_t{64} << 10;
  low = std::max(low, root_close > kTailBytes ? root_close - kTailBytes : 0);
  for (size_t k = root_close; k-- > low;) {
    if (json[k] != ']') continue;
    size_t before = k;
    while (before > low && is_json_space(json[before - 1])) --before;
    if (before == low || json[before - 1] != '}') continue;
    size_t after = k + 1;
    while (is_json_space(json[after])) ++after;  // stops at root_close at the latest
    if (json[after] != ',' && after != root_close) continue;
    return std::make_pair(k, after == root_close ? size : after);
  }
  return std::nullopt;
}

PartThread::PartThread() {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [this] { return done_ < posted_ || quit_; });
      if (done_ == posted_) return;  // quit, nothing left
      std::function<void()> job = std::move(jobs_[done_]);
      lock.unlock();
      job();
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  });
}

PartThread::~PartThread() {
  {
    std::lock_guard<std::mutex> lock(m_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void PartThread::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(m_);
    jobs_.push_back(std::move(job));
    ++posted_;
  }
  cv_.notify_all();
}

void PartThread::wait() {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [this] { return done_ == posted_; });
}

EventTable parse_split(char* json, size_t size, const std::string& label, size_t split_min_bytes,
                       SplitParse* how, PartThread* thread) {
  SplitParse ignored;
  SplitParse& went = how ? *how : ignored;
  went = SplitParse::kOneThread;
  if (size < split_min_bytes) return parse_trace_json(json, size, label);
  const size_t bom = size >= 3 && std::string_view(json, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  const std::optional<TraceCut> cut = find_cut(json, bom, size);
  if (!cut) return parse_trace_json(json, size, label);
  std::optional<EventTable> table;
  try {
    const CutBrackets brackets(json, size, *cut);
    table = parse_trace_parts(json, size, bom, label, *cut, thread);
  } catch (...) {
    table.reset();  // the message, if any, comes from the parse on one thread
  }
  if (table) {
    went = SplitParse::kTwoParts;
    return std::move(*table);
  }
  went = SplitParse::kOneThreadAfterParts;
  return parse_trace_json(json, size, label);
}

}  // namespace detail

EventTable parse_trace_json_split(char* json, size_t size, const std::string& label,
                                  size_t split_min_bytes, SplitParse* how) {
  return detail::parse_split(json, size, label, split_min_bytes, how, nullptr);
}

}  // namespace lumos::trace
