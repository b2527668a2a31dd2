// Loads a Kineto / Chrome-trace JSON file (plain or gzip) into an EventTable with simdjson.
// Accepts every convention of peers-and-trace-format.md §2: integer absolute µs or float µs with
// baseTimeNanoseconds, both External id conventions, string pids/tids, legacy category names,
// cuda_sync events, NCCL args, and a bare array of events.
#pragma once
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "trace/event_table.hpp"

namespace lumos::trace {

// A JSON object without 'traceEvents' (a PyTorch execution trace, another tool's JSON): not a
// trace of this format rather than a broken one, so that a folder of rank traces can skip it.
class NotKinetoTrace : public InputError {
 public:
  using InputError::InputError;
};

// Throws InputError with "FILE: event #I (byte B): field 'F': expected ..." on bad input, and
// on a path that is not a regular file or holds (or inflates to) more than `max_bytes`.
// "-" reads standard input.
EventTable load_trace(const std::string& path, uint64_t max_bytes = common::max_trace_bytes());

// Parses JSON text already in memory; `json` must be followed by at least 64 readable bytes
// (simdjson padding). `label` names the source in messages.
EventTable parse_trace_json(const char* json, size_t size, const std::string& label);

// parse_trace_json on a text it may write to: one of `split_min_bytes` or more is parsed in two
// parts on two threads (docs/design.md, "Reading traces"), with a few bytes between two events
// changed while it runs and put back before it returns. The table, or the error, is
// parse_trace_json's.
// `how`, when given, says which way it went.
inline constexpr size_t kSplitParseMinBytes = size_t{4} << 20;
enum class SplitParse { kOneThread, kTwoParts, kOneThreadAfterParts };
EventTable parse_trace_json_split(char* json, size_t size, const std::string& label,
                                  size_t split_min_bytes = kSplitParseMinBytes,
                                  SplitParse* how = nullptr);

// A gzip trace inflated and parsed a piece of about `piece_bytes` at a time, each piece ending
// between two events, so that its text is never whole in memory (docs/design.md, "Reading
// traces"); a stream or text this cannot take is inflated whole and parsed as before. The table,
// or the error, is parse_trace_json's of the inflated text (after the gzip checks of
// common::gunzip_bytes). `how`, when given, says which way it went.
inline constexpr size_t kTracePieceBytes = size_t{1} << 20;
enum class GzipParse { kPieces, kOnePiece, kWhole };
EventTable parse_gzip_trace(const char* data, size_t size, const std::string& label,
                            uint64_t max_bytes = common::max_trace_bytes(),
                            size_t piece_bytes = kTracePieceBytes, GzipParse* how = nullptr);

// Loads from memory bytes that may be gzip; used by the fuzzer and tests.
EventTable parse_trace_bytes(const char* data, size_t size, const std::string& label,
                             uint64_t max_bytes = common::max_trace_bytes());

// Parses a JSON number token in µs ("1623142623460111", "1365627862757.064", "1.5e3") into
// integer nanoseconds without going through a double where the digits allow. Returns false if
// the token is not a number.
bool parse_us_token_to_ns(std::string_view token, int64_t* out_ns);

}  // namespace lumos::trace
