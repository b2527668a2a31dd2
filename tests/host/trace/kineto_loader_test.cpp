// The loader accepts every convention of peers-and-trace-format.md §2.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"

using lumos::trace::EventKind;
using lumos::trace::parse_trace_bytes;
using lumos::trace::SyncKind;

namespace {

using lumos::testing::gzip_string;

lumos::trace::EventTable parse(const std::string& json) {
  return parse_trace_bytes(json.data(), json.size(), "test.json");
}

}  // namespace

TEST(TimeTokens, IntegerMicrosecondsBecomeExactNanoseconds) {
  int64_t ns = 0;
  ASSERT_TRUE(lumos::trace::parse_us_token_to_ns("1623142623460111", &ns));
  EXPECT_EQ(ns, 1623142623460111000LL);
}

TEST(TimeTokens, FractionalMicrosecondsKeepNanosecondDigits) {
  int64_t ns = 0;
  ASSERT_TRUE(lumos::trace::parse_us_token_to_ns("1365627862757.064", &ns));
  EXPECT_EQ(ns, 1365627862757064LL);
  ASSERT_TRUE(lumos::trace::parse_us_token_to_ns("2.0805", &ns));  // rounds the 4th digit
  EXPECT_EQ(ns, 2081);
  ASSERT_TRUE(lumos::trace::parse_us_token_to_ns("1.5e3", &ns));
  EXPECT_EQ(ns, 1500000);
  EXPECT_FALSE(lumos::trace::parse_us_token_to_ns("abc", &ns));
}

TEST(TimeTokens, TheLargestTimesFitAndOneMoreIsRejected) {
  int64_t ns = 0;
  // Trace times stay within 2^62 ns (4611686018427387 whole µs), so ts + dur cannot overflow.
  ASSERT_TRUE(lumos::trace::parse_us_token_to_ns("4611686018427387.25", &ns));
  EXPECT_EQ(ns, 4611686018427387250LL);
  ASSERT_TRUE(lumos::trace::parse_us_token_to_ns("-4611686018427387", &ns));
  EXPECT_EQ(ns, -4611686018427387000LL);
  EXPECT_FALSE(lumos::trace::parse_us_token_to_ns("4611686018427388", &ns));
  EXPECT_FALSE(lumos::trace::parse_us_token_to_ns("9223372036854779", &ns));
  EXPECT_FALSE(lumos::trace::parse_us_token_to_ns("-99999999999999999999", &ns));
}

TEST(KinetoLoader, ReadsCoreFieldsOfCpuRuntimeAndKernelEvents) {
  const auto t = parse(R"J({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":100,"dur":50,"args":{"External id":7}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":110,"dur":5,"args":{"correlation":9,"External id":7}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":120,"dur":30,"args":{"correlation":9,"stream":7,"device":0}},
    {"ph":"s","cat":"ac2g","id":9,"pid":1,"tid":2,"ts":110,"name":"ac2g"},
    {"ph":"M","name":"process_name","pid":0,"args":{"name":"GPU 0"}}]})J");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events_in_file, 5u);
  EXPECT_EQ(t.events[0].kind, EventKind::kCpuOp);
  EXPECT_EQ(t.events[0].external_id, 7);
  EXPECT_EQ(t.events[1].kind, EventKind::kRuntime);
  EXPECT_EQ(t.events[1].correlation, 9);
  EXPECT_EQ(t.events[2].kind, EventKind::kKernel);
  EXPECT_EQ(t.events[2].stream, 7);
  EXPECT_EQ(t.events[2].ts_ns, 120000);
  EXPECT_EQ(t.events[2].dur_ns, 30000);
  EXPECT_EQ(t.name_of(t.events[2]), "gemm");
}

TEST(KinetoLoader, AcceptsLegacyCategoriesStringTidsAndLowercaseExternalId) {
  const auto t = parse(R"J({"traceEvents":[
    {"ph":"X","cat":"Operator","name":"ProfilerStep#5","pid":10,"tid":"main","ts":1,"dur":9},
    {"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":10,"tid":"main","ts":2,"dur":1,"args":{"correlation":3,"external id":3}},
    {"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":4,"dur":2,"args":{"correlation":3,"device":0}},
    {"ph":"X","cat":"Memset","name":"Memset (Device)","pid":0,"tid":"stream 7","ts":7,"dur":1,"args":{"correlation":4}}]})J");
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.events[0].kind, EventKind::kCpuOp);
  EXPECT_EQ(t.events[0].tid, t.events[1].tid);  // the same string tid maps to one id
  EXPECT_LT(t.events[0].tid, 0);
  EXPECT_EQ(t.events[1].external_id, 3);
  EXPECT_EQ(t.events[2].stream, 7);  // from "stream 7"
  EXPECT_EQ(t.events[3].kind, EventKind::kMemset);
}

TEST(KinetoLoader, FloatTimesWithBaseTimeAndDistributedInfo) {
  const auto t = parse(R"J({"distributedInfo":{"backend":"nccl","rank":3,"world_size":8},
    "deviceProperties":[{"id":0,"name":"NVIDIA H100"}],
    "baseTimeNanoseconds":1767189312000000000,
    "traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1365627862757.064,"dur":2.08}]})J");
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.backend, "nccl");
  EXPECT_EQ(t.gpu_name, "NVIDIA H100");
  EXPECT_EQ(t.base_time_ns, 1767189312000000000LL);
  EXPECT_EQ(t.events[0].ts_ns, 1365627862757064LL);
  EXPECT_EQ(t.events[0].dur_ns, 2080);
}

TEST(KinetoLoader, BareArrayOfEventsIsATrace) {
  const auto t =
      parse(R"J([{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":5,"dur":1}])J");
  ASSERT_EQ(t.events.size(), 1u);
}

TEST(KinetoLoader, CudaSyncEventsCarryKindStreamAndRecordCorrelation) {
  const auto t = parse(R"J({"traceEvents":[
    {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":20,"ts":1,"dur":1,
     "args":{"cuda_sync_kind":"Stream Wait Event","stream":20,"wait_on_stream":7,"wait_on_cuda_event_record_corr_id":41,"correlation":42,"device":0}},
    {"ph":"X","cat":"cuda_sync","name":"Context Sync","pid":0,"tid":-1,"ts":3,"dur":1,"args":{"stream":-1,"correlation":43,"device":0}}]})J");
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].sync, SyncKind::kStreamWaitEvent);
  EXPECT_EQ(t.events[0].wait_on_stream, 7);
  EXPECT_EQ(t.events[0].wait_on_record_corr, 41);
  EXPECT_EQ(t.events[1].sync, SyncKind::kContext);
}

TEST(KinetoLoader, RocmHexStreamsAndHipNames) {
  const auto t = parse(R"J({"traceEvents":[
    {"ph":"X","cat":"cuda_runtime","name":"hipMemcpyWithStream","pid":1,"tid":1,"ts":1,"dur":5,"args":{"stream":"0x1f","correlation":2}}]})J");
  EXPECT_EQ(t.events[0].stream, 31);
}

TEST(KinetoLoader, NcclArgsOverrideWhatTheKernelNameSays) {
  const auto t = parse(R"J({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":20,"ts":1,"dur":5,
     "args":{"correlation":2,"stream":20,"Collective name":"_allgather_base","dtype":"BFloat16","In msg nelems":1024,"Out msg nelems":8192,"Group size":8,"Seq":17,"Process Group Name":"0"}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)","pid":0,"tid":20,"ts":9,"dur":5,"args":{"correlation":3,"stream":20}}]})J");
  ASSERT_EQ(t.collectives.size(), 2u);
  const auto& a = t.collectives[t.events[0].collective];
  EXPECT_EQ(a.type, lumos::trace::CollectiveType::kAllGather);
  EXPECT_EQ(a.dtype, "BFloat16");
  EXPECT_EQ(a.group_size, 8);
  EXPECT_EQ(a.seq, 17);
  EXPECT_EQ(a.out_nelems, 8192);
  EXPECT_EQ(a.algorithm, "RING");
  const auto& b = t.collectives[t.events[1].collective];
  EXPECT_EQ(b.type, lumos::trace::CollectiveType::kAllReduce);
  EXPECT_EQ(b.protocol, "LL");
  EXPECT_EQ(b.dtype, "float");
}

TEST(KinetoLoader, GzipAndPlainGiveTheSameTable) {
  const std::string json =
      R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":5,"dur":1}]})J";
  const std::string gz = gzip_string(json);
  const auto a = parse(json);
  const auto b = parse_trace_bytes(gz.data(), gz.size(), "test.json.gz");
  ASSERT_EQ(a.events.size(), b.events.size());
  EXPECT_EQ(a.events[0].ts_ns, b.events[0].ts_ns);
  EXPECT_EQ(b.json_bytes, json.size());
}

TEST(KinetoLoader, SkipsCategoriesItDoesNotModel) {
  const auto t = parse(R"J({"traceEvents":[
    {"ph":"X","cat":"python_function","name":"f","pid":1,"tid":1,"ts":1,"dur":1},
    {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":1,"dur":1},
    {"ph":"i","name":"Iteration Start","pid":"Traces","tid":"","ts":1,"s":"g"},
    {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":5,"dur":1}]})J");
  ASSERT_EQ(t.events.size(), 1u);
}
