// A trace's text parsed in parts (docs/design.md, "Reading traces"): cut in two between two events
// of traceEvents and parsed on two threads (split_parse.cpp finds the cut and writes its
// brackets, kineto_loader.cpp parses the parts), or, inflated from gzip, piece by piece as it
// comes (stream_parse.cpp, through PieceLoader). Not for other folders: they call
// trace/kineto_loader.hpp.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "trace/event_table.hpp"
#include "trace/kineto_loader.hpp"

namespace lumos::trace::detail {

// JSON's whitespace (RFC 8259): what may lie between two events.
inline bool is_json_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Byte positions in the text; the brackets are written there while the parts are parsed.
struct TraceCut {
  size_t comma;  // the ',' after the head's last event: ']' there and '}' in the space after it
  size_t open;   // a space just before the later part's first event: '[' there
  size_t close;  // the ']' that closes traceEvents, the later part's last byte
  size_t tail;   // the ',' after it, '{' there, starting the keys after traceEvents; or the size
};

// The second thread of a parse, which load_trace starts before it reads the file: its start (up to
// a few ms when the other core sleeps) then overlaps the reading and the inflating. It parses the
// later part of a split text (and faults the inflated text's buffer in before), or inflates gzip
// pieces ahead of their parse. It runs the jobs posted, in order.
class PartThread {
 public:
  PartThread();  // throws std::system_error when no thread can be started
  ~PartThread();
  PartThread(const PartThread&) = delete;
  PartThread& operator=(const PartThread&) = delete;
  void post(std::function<void()> job);
  void wait();  // until every job posted has run

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> jobs_;
  size_t posted_ = 0, done_ = 0;
  bool quit_ = false;
  std::thread thread_;
};

// The head [bom, comma + 2) on this thread, then the keys of the tail; the later part
// [open, close] on `thread` (one of its own when null); the two tables made one. Nothing when
// either part failed or the cut is not between two events of traceEvents: then the caller parses
// the whole text on one thread.
std::optional<EventTable> parse_trace_parts(const char* json, size_t size, size_t bom,
                                            const std::string& label, const TraceCut& cut,
                                            PartThread* thread);

// traceEvents' closing bracket and what follows it, looked for from the end of [low, size): the
// bracket's position, and the ',' before the keys after traceEvents (or `size` when none follow).
// Nothing when the text does not end as a trace object whose traceEvents end in an event does.
std::optional<std::pair<size_t, size_t>> find_events_close(const char* json, size_t low,
                                                           size_t size);

// A trace's text parsed piece by piece in file order, each piece a JSON document of its own
// (stream_parse.cpp cuts them between two events of traceEvents, docs/design.md "Reading
// traces"): one loader throughout, so names, string ids and event numbers come out as one parse
// of the whole text gives them. Each call throws what the loader throws, or returns false when
// the piece did not end where its cut said; the caller then parses the whole text instead.
class PieceLoader {
 public:
  // `size_hint`: the text's likely size, for reserving the table.
  PieceLoader(const std::string& label, size_t size_hint);
  ~PieceLoader();
  PieceLoader(const PieceLoader&) = delete;
  PieceLoader& operator=(const PieceLoader&) = delete;
  // The text's start through its first pieces's last event, with `]}` written in as its last two
  // bytes: traceEvents must end at that bracket.
  bool head(const char* text, size_t n);
  // `[` + events + `]`: the next events of traceEvents.
  bool events(const char* text, size_t n);
  // `{` + the keys after traceEvents + the closing `}`.
  void tail(const char* text, size_t n);
  // The checks on the whole trace; `text_bytes`: the whole text's size.
  EventTable finish(size_t text_bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// parse_gzip_trace; the stream inflated whole when it must be is parsed by parse_split with
// `split_min_bytes` and `thread`, its buffer given to `fault_in` as gunzip_bytes gives it.
EventTable parse_gzip(const char* gz, size_t gz_size, const std::string& label, uint64_t max_bytes,
                      size_t piece_bytes, size_t split_min_bytes, PartThread* thread,
                      const std::function<void(char*, size_t)>& fault_in, GzipParse* how);

// parse_trace_json_split, its later part parsed on `thread` when not null.
EventTable parse_split(char* json, size_t size, const std::string& label, size_t split_min_bytes,
                       SplitParse* how, PartThread* thread);

}  // namespace lumos::trace::detail
