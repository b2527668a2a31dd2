// A trace parsed in two parts on two threads gives the table, and the error, that one thread
// gives: names, string ids, shapes, collectives and event numbers renumbered across the cut, the
// keys after traceEvents read, the text put back as it was.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "support/test_util.hpp"
#include "support/trace_text.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_cut.hpp"

namespace {

using lumos::trace::EventTable;
using lumos::trace::SplitParse;

using lumos::testing::event;
using lumos::testing::expect_same_tables;
using lumos::testing::padded;
using lumos::testing::trace;

EventTable parse_split(const std::string& s, SplitParse* how) {
  std::vector<char> buf = padded(s);
  EventTable t = lumos::trace::parse_trace_json_split(buf.data(), s.size(), "t.json", 0, how);
  EXPECT_EQ(std::string(buf.data(), s.size()), s) << "the text was not put back";
  return t;
}

}  // namespace

TEST(SplitParse, TwoPartsGiveTheOneThreadTable) {
  const std::string s = trace(400);
  SplitParse how;
  const EventTable split = parse_split(s, &how);
  EXPECT_EQ(how, SplitParse::kTwoParts);
  const EventTable whole = lumos::trace::parse_trace_json(padded(s).data(), s.size(), "t.json");
  expect_same_tables(split, whole);
  // The trace holds what the renumbering is for, on both sides of the cut.
  EXPECT_GT(whole.collectives.size(), 10u);
  EXPECT_EQ(whole.rank, 3);
  EXPECT_EQ(whole.base_time_ns, 1000000);
}

TEST(SplitParse, TraceEventsLastAndABareArrayOfEvents) {
  std::string last = trace(100);
  last = last.substr(0, last.rfind("\n  ],")) + "\n  ]\n}\n";
  std::string bare = "[\n  ";
  for (int k = 0; k < 100; ++k) bare += (k ? ",\n  " : "") + event(k, 100);
  bare += "\n]\n";
  for (const std::string& s : {last, bare}) {
    SplitParse how;
    const EventTable split = parse_split(s, &how);
    const EventTable whole = lumos::trace::parse_trace_json(padded(s).data(), s.size(), "t.json");
    expect_same_tables(split, whole);
    // A bare array has no '}' closing a document: it is read on one thread.
    EXPECT_EQ(how, s == last ? SplitParse::kTwoParts : SplitParse::kOneThread);
  }
}

TEST(SplitParse, SmallOrCompactTextsStayOnOneThread) {
  std::string compact = trace(100);
  std::string one_line;
  for (char c : compact)
    if (c != '\n') one_line += c;
  SplitParse how;
  parse_split(one_line, &how);
  EXPECT_EQ(how, SplitParse::kOneThread);
  std::vector<char> buf = padded(compact);
  lumos::trace::parse_trace_json_split(buf.data(), compact.size(), "t.json", compact.size() + 1,
                                       &how);
  EXPECT_EQ(how, SplitParse::kOneThread);
}

// A cut inside an event (9/16 of the text falls in a flow event, before its nested list) or in the
// device list is found by the parts' parses and the text read again on one thread.
TEST(SplitParse, ACutNotBetweenTwoEventsIsReadAgainOnOneThread) {
  // 9/16 of the text falls in the flow event's padding: the first `},` + line break + `{`
  // after it is inside the event's list.
  const std::string flow = R"({"ph": "f", "id": 3, "pid": 1, "tid": 1, "ts": 5, "pad": ")" +
                           std::string(600, 'p') + R"(", "args": {"list": [{"a": 1},
      {"b": 2}]}})";
  const std::string in_event = R"({"traceEvents": [)" + event(0, 2) + ",\n  " + flow + "\n]}";
  // A long device list before a short traceEvents.
  std::string in_devices = R"({"deviceProperties": [
    )";
  for (int k = 0; k < 100; ++k) in_devices += (k ? ",\n    " : "") + std::string(R"({"id": 0})");
  in_devices += "\n  ],\n  \"traceEvents\": [" + event(0, 2) + ",\n  " + event(1, 2) + "]}";
  for (const std::string& s : {in_event, in_devices}) {
    SplitParse how;
    const EventTable split = parse_split(s, &how);
    const EventTable whole = lumos::trace::parse_trace_json(padded(s).data(), s.size(), "t.json");
    expect_same_tables(split, whole);
    EXPECT_EQ(how, SplitParse::kOneThreadAfterParts);
  }
}

// Bad JSON or a bad field anywhere, near the cut included, gives the one-thread message.
TEST(SplitParse, ErrorsAreTheOneThreadErrors) {
  const std::string good = trace(60);
  // The cut is at the first event boundary after 9/16 of the text.
  const size_t cut = good.find("},\n  {", good.size() / 16 * 9);
  ASSERT_NE(cut, std::string::npos);
  std::vector<size_t> at = {10,
                            good.find("traceEvents") + 20,
                            good.size() / 3,
                            cut - 30,
                            cut - 1,
                            cut,
                            cut + 1,
                            cut + 2,
                            cut + 3,
                            cut + 5,
                            cut + 40,
                            good.size() - 80,
                            good.size() - 20,
                            good.size() - 2,
                            good.size() - 1};
  int refused = 0;
  for (const size_t p : at) {
    for (const char c : {'{', ']', '"', 'x', ','}) {
      std::string bad = good;
      bad[p] = c;
      std::vector<char> whole_buf = padded(bad);
      const std::string whole = lumos::testing::input_error_of(
          [&] { lumos::trace::parse_trace_json(whole_buf.data(), bad.size(), "t.json"); });
      SplitParse how;
      const std::string split = lumos::testing::input_error_of([&] { parse_split(bad, &how); });
      EXPECT_EQ(split, whole) << "byte " << p << " = '" << c << "'";
      refused += !whole.empty();
    }
  }
  EXPECT_GT(refused, 40);  // most of these are refused, so the messages were compared
  // A field the loader refuses, in the later part: its event number counts the head's events.
  std::string late_bad = good;
  late_bad.replace(late_bad.rfind("\"dur\": 3"), 8, "\"dur\": -3");
  std::vector<char> buf = padded(late_bad);
  const std::string whole = lumos::testing::input_error_of(
      [&] { lumos::trace::parse_trace_json(buf.data(), late_bad.size(), "t.json"); });
  EXPECT_NE(whole.find("field 'dur'"), std::string::npos) << whole;
  EXPECT_EQ(lumos::testing::input_error_of([&] { parse_split(late_bad, nullptr); }), whole);
}

TEST(SplitParse, SharedTracesGiveTheOneThreadTable) {
  LUMOS_REQUIRE_TRACES();
  int in_parts = 0;
  for (const std::string& path : lumos::testing::shared_traces()) {
    SCOPED_TRACE(path);
    lumos::common::FileBytes fb = lumos::common::read_file_bytes(path, 64);
    const std::string before(fb.data.data(), fb.size);
    EventTable whole;
    try {
      whole = lumos::trace::parse_trace_json(fb.data.data(), fb.size, path);
    } catch (const lumos::InputError&) {
      continue;  // not a Kineto trace: the errors are compared above
    }
    SplitParse how;
    const EventTable split =
        lumos::trace::parse_trace_json_split(fb.data.data(), fb.size, path, 1 << 20, &how);
    expect_same_tables(split, whole);
    EXPECT_EQ(std::string(fb.data.data(), fb.size), before);
    in_parts += how == SplitParse::kTwoParts;
    // load_trace starts the later part's thread before it reads a file of 256 KiB or more.
    expect_same_tables(lumos::trace::load_trace(path), whole);
  }
  EXPECT_GE(in_parts, 4);  // the shared traces of a few MB and more
}

// The thread load_trace starts before reading runs what it is given in order (the buffer's faulting
// in, then the later part), and the table is the one-thread parse's.
TEST(SplitParse, APartThreadStartedBeforeRunsItsJobsInOrder) {
  const std::string s = trace(300);
  std::vector<int> ran;
  lumos::trace::detail::PartThread thread;
  thread.post([&] { ran.push_back(1); });
  thread.post([&] { ran.push_back(2); });
  std::vector<char> buf = padded(s);
  SplitParse how;
  const EventTable split =
      lumos::trace::detail::parse_split(buf.data(), s.size(), "t.json", 0, &how, &thread);
  EXPECT_EQ(how, SplitParse::kTwoParts);
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
  expect_same_tables(split, lumos::trace::parse_trace_json(padded(s).data(), s.size(), "t.json"));
}
