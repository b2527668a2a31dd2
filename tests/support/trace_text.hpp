// What tests of the trace loader's ways of parsing a text (in parts, in pieces) share: tables
// compared field by field, and a trace written as profilers write it.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/event_table.hpp"

namespace lumos::testing {

using lumos::trace::EventTable;

// simdjson's padding after a text.
inline std::vector<char> padded(const std::string& s) {
  std::vector<char> v(s.begin(), s.end());
  v.resize(s.size() + 64, '\0');
  return v;
}

inline void expect_same_tables(const EventTable& a, const EventTable& b) {
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
inline std::string event(int k, int n) {
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
inline std::string trace(int n) {
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

}  // namespace lumos::testing
