// A gzip trace inflated and parsed a piece at a time gives the table, and the error, that
// inflating it whole and parsing the text as one document gives: across pieces of every size,
// cuts that are not between two events, bad fields in any piece, and streams zlib or the gzip
// trailer refuse.
#include <libdeflate.h>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "support/test_util.hpp"
#include "support/trace_text.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_cut.hpp"

namespace {

using lumos::testing::event;
using lumos::testing::expect_same_tables;
using lumos::testing::padded;
using lumos::testing::trace;
using lumos::trace::EventTable;
using lumos::trace::GzipParse;

std::string gzip(const std::string& s) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::string out(libdeflate_gzip_compress_bound(c, s.size()), '\0');
  out.resize(libdeflate_gzip_compress(c, s.data(), s.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

// What inflating the stream whole and parsing the text as one document gives.
EventTable whole_table(const std::string& gz) {
  lumos::common::FileBytes fb = lumos::common::gunzip_bytes(gz.data(), gz.size(), 64, "t.json.gz");
  return lumos::trace::parse_trace_json(fb.data.data(), fb.size, "t.json.gz");
}

std::string whole_error(const std::string& gz, uint64_t max_bytes = UINT64_MAX) {
  return lumos::testing::input_error_of([&] {
    lumos::common::FileBytes fb =
        lumos::common::gunzip_bytes(gz.data(), gz.size(), 64, "t.json.gz", max_bytes);
    lumos::trace::parse_trace_json(fb.data.data(), fb.size, "t.json.gz");
  });
}

// The pieces made on this thread alone, or ahead of the parse on a second one as load_trace
// makes them: each way must give the same table and the same message.
EventTable pieces(const std::string& gz, size_t piece_bytes, GzipParse* how,
                  bool second_thread = false, uint64_t max_bytes = UINT64_MAX) {
  std::optional<lumos::trace::detail::PartThread> thread;
  if (second_thread) thread.emplace();
  return lumos::trace::detail::parse_gzip(gz.data(), gz.size(), "t.json.gz", max_bytes, piece_bytes,
                                          lumos::trace::kSplitParseMinBytes,
                                          thread ? &*thread : nullptr, {}, how);
}

std::string pieces_error(const std::string& gz, size_t piece_bytes,
                         uint64_t max_bytes = UINT64_MAX) {
  const std::string alone = lumos::testing::input_error_of([&] {
    lumos::trace::parse_gzip_trace(gz.data(), gz.size(), "t.json.gz", max_bytes, piece_bytes);
  });
  GzipParse how;
  const std::string two =
      lumos::testing::input_error_of([&] { pieces(gz, piece_bytes, &how, true, max_bytes); });
  EXPECT_EQ(two, alone) << "made on a second thread";
  return alone;
}

}  // namespace

TEST(GzipPieces, PiecesOfEverySizeGiveTheWholeTextsTable) {
  const std::string s = trace(3000);
  const std::string gz = gzip(s);
  const EventTable whole = whole_table(gz);
  ASSERT_GT(whole.collectives.size(), 100u);  // names, string ids, shapes renumbered if wrong
  for (const size_t piece : {size_t{400}, size_t{4096}, size_t{65536}, s.size() + 1}) {
    SCOPED_TRACE(piece);
    for (const bool second_thread : {false, true}) {
      GzipParse how;
      expect_same_tables(pieces(gz, piece, &how, second_thread), whole);
      EXPECT_EQ(how, piece > s.size() ? GzipParse::kOnePiece : GzipParse::kPieces);
    }
  }
}

TEST(GzipPieces, TraceEventsLastABomAndABareArray) {
  std::string last = trace(300);
  last = last.substr(0, last.rfind("\n  ],")) + "\n  ]\n}\n";
  const std::string bom = "\xEF\xBB\xBF" + trace(300);
  std::string bare = "[\n  ";
  for (int k = 0; k < 300; ++k) bare += (k ? ",\n  " : "") + event(k, 300);
  bare += "\n]\n";
  for (const std::string& s : {last, bom, bare}) {
    const std::string gz = gzip(s);
    GzipParse how;
    expect_same_tables(pieces(gz, 1000, &how), whole_table(gz));
    // A bare array's first piece is no trace object: the stream is inflated again, whole.
    EXPECT_EQ(how, s == bare ? GzipParse::kWhole : GzipParse::kPieces);
  }
}

TEST(GzipPieces, CompactTextIsOnePiece) {
  std::string one_line;
  for (char c : trace(300))
    if (c != '\n') one_line += c;
  const std::string gz = gzip(one_line);
  GzipParse how;
  expect_same_tables(pieces(gz, 1000, &how), whole_table(gz));
  EXPECT_EQ(how, GzipParse::kOnePiece);  // no cut anywhere: the buffer grew to the whole text
}

// Cuts inside an event (a flow event's list written over two lines) or in the device list before
// traceEvents: a piece's parse finds it, and the stream is read whole.
TEST(GzipPieces, ACutNotBetweenTwoEventsIsReadWhole) {
  const std::string flow = R"({"ph": "f", "id": 3, "pid": 1, "tid": 1, "ts": 5, "pad": ")" +
                           std::string(600, 'p') + R"(", "args": {"list": [{"a": 1},
      {"b": 2}]}})";
  const std::string in_event =
      R"({"traceEvents": [)" + event(0, 2) + ",\n  " + flow + ",\n  " + event(1, 2) + "\n]}";
  std::string in_devices = R"({"deviceProperties": [
    )";
  for (int k = 0; k < 100; ++k) in_devices += (k ? ",\n    " : "") + std::string(R"({"id": 0})");
  in_devices += "\n  ],\n  \"traceEvents\": [" + event(0, 2) + ",\n  " + event(1, 2) + "]}";
  for (const std::string& s : {in_event, in_devices}) {
    const std::string gz = gzip(s);
    GzipParse how;
    // Pieces that end inside the flow event's list, or inside the device list.
    expect_same_tables(pieces(gz, s == in_event ? 700 : 300, &how), whole_table(gz));
    EXPECT_EQ(how, GzipParse::kWhole);
  }
}

// Bad JSON or a bad field in any piece, at a cut or beside one, gives the whole text's message.
TEST(GzipPieces, ErrorsAreTheWholeTextsErrors) {
  const std::string good = trace(80);
  std::vector<size_t> at = {10,
                            good.find("traceEvents") + 20,
                            good.size() - 80,
                            good.size() - 20,
                            good.size() - 2,
                            good.size() - 1};
  for (size_t cut = good.find("},\n  {"); cut != std::string::npos;
       cut = good.find("},\n  {", cut + 2000)) {
    for (const size_t d : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{5}})
      at.push_back(cut + d);
    at.push_back(cut - 1);
  }
  int refused = 0;
  for (const size_t p : at) {
    for (const char c : {'{', ']', '"', 'x', ','}) {
      std::string bad = good;
      bad[p] = c;
      const std::string gz = gzip(bad);
      const std::string whole = whole_error(gz);
      for (const size_t piece : {size_t{500}, size_t{3000}})
        EXPECT_EQ(pieces_error(gz, piece), whole) << "byte " << p << " = '" << c << "'";
      refused += !whole.empty();
    }
  }
  EXPECT_GT(refused, 100);  // most of these are refused, so the messages were compared
  // A field the loader refuses, near the end: its event number counts every piece's events.
  std::string late_bad = good;
  late_bad.replace(late_bad.rfind("\"dur\": 3"), 8, "\"dur\": -3");
  const std::string gz = gzip(late_bad);
  EXPECT_NE(whole_error(gz).find("field 'dur'"), std::string::npos) << whole_error(gz);
  EXPECT_EQ(pieces_error(gz, 500), whole_error(gz));
}

// Streams the gzip checks refuse, more than one member, and a text over the limit: the messages
// and tables of inflating the stream whole.
TEST(GzipPieces, GzipStreamsAndLimitsAreCheckedAsWhole) {
  const std::string s = trace(400);
  const std::string gz = gzip(s);
  std::string bad_crc = gz, bad_size = gz, bad_data = gz;
  bad_crc[gz.size() - 6] ^= 1;
  bad_size[gz.size() - 3] ^= 1;
  bad_data[gz.size() / 2] ^= 0x55;
  const std::vector<std::string> refused = {bad_crc,
                                            bad_size,
                                            bad_data,
                                            gz.substr(0, gz.size() / 2),
                                            gz.substr(0, gz.size() - 1),
                                            gz + "trailing text",
                                            gz + gz};
  for (const std::string& z : refused) {
    const std::string whole = whole_error(z);
    EXPECT_FALSE(whole.empty());
    EXPECT_EQ(pieces_error(z, 1000), whole);
  }
  // Two members whose texts make one trace: inflated whole, as gunzip_bytes reads them.
  const size_t half = s.find("},\n  {", s.size() / 2) + 1;
  const std::string two = gzip(s.substr(0, half)) + gzip(s.substr(half));
  GzipParse how;
  expect_same_tables(pieces(two, 1000, &how), whole_table(two));
  EXPECT_EQ(how, GzipParse::kWhole);
  // The limit on the inflated size, met in the middle of the pieces.
  for (const uint64_t limit : {uint64_t{100}, uint64_t{s.size() / 2}, uint64_t{s.size() - 1}}) {
    EXPECT_NE(whole_error(gz, limit).find("limit"), std::string::npos);
    EXPECT_EQ(pieces_error(gz, 1000, limit), whole_error(gz, limit));
  }
  EXPECT_EQ(pieces_error(gz, 1000, s.size()), "");
}

TEST(GzipPieces, SharedTracesGiveTheWholeTextsTable) {
  LUMOS_REQUIRE_TRACES();
  int in_pieces = 0;
  for (const std::string& path : lumos::testing::shared_traces()) {
    lumos::common::FileBytes raw = lumos::common::read_regular_file(path, 64);
    if (!lumos::common::looks_gzip(raw.data.data(), raw.size)) continue;
    SCOPED_TRACE(path);
    const std::string gz(raw.data.data(), raw.size);
    lumos::common::FileBytes fb = lumos::common::read_file_bytes(path, 64);
    EventTable whole;
    try {
      whole = lumos::trace::parse_trace_json(fb.data.data(), fb.size, path);
    } catch (const lumos::InputError&) {
      continue;  // not a Kineto trace: the errors are compared above
    }
    for (const size_t piece : {size_t{64} << 10, lumos::trace::kTracePieceBytes}) {
      GzipParse how;
      expect_same_tables(
          lumos::trace::parse_gzip_trace(gz.data(), gz.size(), path, UINT64_MAX, piece, &how),
          whole);
      in_pieces += how == GzipParse::kPieces;
    }
    expect_same_tables(lumos::trace::load_trace(path), whole);
  }
  EXPECT_GE(in_pieces, 4);
}
