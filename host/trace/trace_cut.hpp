// A trace's text cut in two between two events of traceEvents, to be parsed on two threads
// (docs/design.md, "Reading traces"): split_parse.cpp finds the cut and writes its brackets,
// kineto_loader.cpp parses the parts. Not for other folders: they call trace/kineto_loader.hpp.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "trace/event_table.hpp"
#include "trace/kineto_loader.hpp"

namespace lumos::trace::detail {

// Byte positions in the text; the brackets are written there while the parts are parsed.
struct TraceCut {
  size_t comma;  // the ',' after the head's last event: ']' there and '}' in the space after it
  size_t open;   // a space just before the later part's first event: '[' there
  size_t close;  // the ']' that closes traceEvents, the later part's last byte
  size_t tail;   // the ',' after it, '{' there, starting the keys after traceEvents; or the size
};

// The second thread of a split parse, which load_trace starts before it reads the file: its start
// (up to a few ms when the other core sleeps) then overlaps the reading and the inflating, and it
// faults the inflated text's buffer in meanwhile. It runs the jobs posted, in order.
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

// parse_trace_json_split, its later part parsed on `thread` when not null.
EventTable parse_split(char* json, size_t size, const std::string& label, size_t split_min_bytes,
                       SplitParse* how, PartThread* thread);

}  // namespace lumos::trace::detail
