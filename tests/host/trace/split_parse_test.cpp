// A trace parsed in two parts on two threads gives the table, and the error, that one thread
// gives: names, string ids, shapes, collectives and event numbers renumbered across the cut, the
// keys after traceEvents read, the text put back as it was.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_cut.hpp"

namespace {

using lumos::trace::EventTable;
using lumos::trace::SplitParse;

// simdjson's padding after a text.
std::vector<char> padded(const std::string& s) {
  std::vector<char> v(s.begin(), s.end());
  v.resize(s.size() + 64, '\0');
  return v;
}

void expect_same_tables(const EventTable& a, const EventTable& b) {
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    const auto &x = a.events[i], &y = b.events[i];
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.sync, y.sync);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.pid, y.pid);
    EXPECT_EQ(x.tid, y.tid);
    EXPECT_EQ(x.ts_ns, y.ts_ns);
    EXPECT_EQ(x.dur_ns, y.dur_ns);
    EXPECT_EQ(x.correlation, y.correlation);
    EXPECT_EQ(x.external_id, y.external_id);
    EXPECT_EQ(x.stream, y.stream);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.wait_on_stream, y.wait_on_stream);
    EXPECT_EQ(x.wait_on_record_corr, y.wait_on_record_corr);
    EXPECT_EQ(x.memcpy_bytes, y.memcpy_bytes);
    EXPECT_EQ(x.collective, y.collective);
    EXPECT_EQ(x.shapes, y.shapes);
    EXPECT_EQ(x.index, y.index);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(a.names, b.names);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    const auto &x = a.collectives[i], &y = b.collectives[i];
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.in_nelems, y.in_nelems);
    EXPECT_EQ(x.out_nelems, y.out_nelems);
    EXPECT_EQ(x.group_size, y.group_size);
    EXPECT_EQ(x.seq, y.seq);
    EXPECT_EQ(x.process_group, y.process_group);
    EXPECT_EQ(x.process_group_desc, y.process_group_desc);
  }
  EXPECT_EQ(a.shape_offset, b.shape_offset);
  EXPECT_EQ(a.input_offset, b.input_offset);
  EXPECT_EQ(a.dims, b.dims);
  EXPECT_EQ(a.input_type, b.input_type);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.traced_ranks, b.traced_ranks);
  ASSERT_EQ(a.pg_config.size(), b.pg_config.size());
  for (size_t i = 0; i < a.pg_config.size(); ++i) {
    EXPECT_EQ(a.pg_config[i].name, b.pg_config[i].name);
    EXPECT_EQ(a.pg_config[i].desc, b.pg_config[i].desc);
    EXPECT_EQ(a.pg_config[i].size, b.pg_config[i].size);
  }
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.gpu_name, b.gpu_name);
  EXPECT_EQ(a.base_time_ns, b.base_time_ns);
  EXPECT_EQ(a.json_bytes, b.json_bytes);
  EXPECT_EQ(a.events_in_file, b.events_in_file);
  EXPECT_EQ(a.path, b.path);
}

// Event k of a trace written as profilers write it (one field per line, `},\n  {` between
// events): CPU ops with shapes, launches, kernels (some NCCL), syncs, string pids and tids that
// first appear on either side of the cut, and skipped events.
std::string event(int k, int n) {
  const std::string ts = std::to_string(1000 + 10 * k);
  // Strings first seen late in the file, so that the later part numbers them on its own.
  const std::string late = k > n * 2 / 3 ? "late " : "";
  switch (k % 7) {
    case 0:
      return R"({"ph": "X", "cat": "cpu_op", "name": ")" + late + "op" + std::to_string(k % 5) +
             R"(", "pid": 1, "tid": ")" + late + R"(main", "ts": )" + ts +
             R"(, "dur": 5,
    "args": {"External id": )" +
             std::to_string(k) + R"(, "Input Dims": [[2, )" + std::to_string(k) +
             R"(], []], "Input type": ["float", ")" + late + R"(bf16"]}})";
    case 1:
      return R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": ")" +
             late + R"(main", "ts": )" + ts + R"(, "dur": 2, "args": {"correlation": )" +
             std::to_string(k) + "}}";
    case 2:
      return R"({"ph": "X", "cat": "kernel", "name": ")" + late +
             R"(gemm", "pid": 0, "tid": "stream 7", "ts": )" + ts +
             R"(, "dur": 3, "args": {"correlation": )" + std::to_string(k - 1) + "}}";
    case 3:
      return R"({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": ")" +
             late + R"(gpu", "tid": ")" + late + R"(comms", "ts": )" + ts +
             R"(, "dur": 4, "args": {"correlation": )" + std::to_string(k) +
             R"(, "In msg nelems": 1024, "Group size": 8, "dtype": "Float", "Process Group Name": "0"}})";
    case 4:
      return R"({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": ")" + late +
             R"(gpu", "tid": 9, "ts": )" + ts + R"(, "dur": 1, "args": {"correlation": )" +
             std::to_string(k) + "}}";
    case 5:
      return R"({"ph": "f", "id": 3, "pid": 1, "tid": 1, "ts": )" + ts +
             R"(, "cat": "ac2g", "name": "ac2g", "args": {"list": [{"a": 1}, {"b": 2}]}})";
    default:
      return R"({"name": "thread", "ph": "M", "pid": ")" + late + R"(x", "tid": 2, "ts": 0})";
  }
}

// A trace of `n` events with keys before and after traceEvents.
std::string trace(int n) {
  std::string s = R"({
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": 0, "name": "Tesla V100"},
    {"id": 1, "name": "Tesla V100"}
  ],
  "traceEvents": [
  )";
  for (int k = 0; k < n; ++k) s += (k ? ",\n  " : "") + event(k, n);
  s += R"(
  ],
  "distributedInfo": {"rank": 3, "world_size": 8, "backend": "nccl",
    "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 8}]},
  "baseTimeNanoseconds": 1000000
})";
  return s;
}

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
