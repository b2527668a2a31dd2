// A trace's text cut in two between two events of traceEvents, to be parsed on two threads
// (docs/design.md, "Reading traces"): split_parse.cpp finds the cut and writes its brackets,
// kineto_loader.cpp parses the parts. Not for other folders: they call trace/kineto_loader.hpp.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "trace/event_table.hpp"

namespace lumos::trace::detail {

// Byte positions in the text; the brackets are written there while the parts are parsed.
struct TraceCut {
  size_t comma;  // the ',' after the head's last event: ']' there and '}' in the space after it
  size_t open;   // a space just before the later part's first event: '[' there
  size_t close;  // the ']' that closes traceEvents, the later part's last byte
  size_t tail;   // the ',' after it, '{' there, starting the keys after traceEvents; or the size
};

// The head [bom, comma + 2) on this thread, then the keys of the tail; the later part
// [open, close] on another; the two tables made one. Nothing when either part failed or the cut
// is not between two events of traceEvents: then the caller parses the whole text on one thread.
std::optional<EventTable> parse_trace_parts(const char* json, size_t size, size_t bom,
                                            const std::string& label, const TraceCut& cut);

}  // namespace lumos::trace::detail
