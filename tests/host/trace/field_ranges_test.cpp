// Trace fields that would not fit what they are stored in are refused with one line naming the
// field, not truncated into another rank or device, and not overflowed (UBSan) on the way.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "trace/kineto_loader.hpp"

namespace {

std::string load_error(const std::string& json) {
  try {
    lumos::trace::parse_trace_bytes(json.data(), json.size(), "t.json");
  } catch (const lumos::InputError& e) {
    return e.what();
  }
  return "";
}

std::string op(const std::string& ts, const std::string& dur) {
  return R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":)J" + ts +
         R"J(,"dur":)J" + dur + "}]}";
}

std::string kernel_with_args(const std::string& args) {
  return R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{)J" +
         args + "}}]}";
}

}  // namespace

// Row 11: ts and dur near 9.2e15 us overflowed int64 nanoseconds (UBSan) and a positive dur was
// called "not non-negative".
TEST(FieldRanges, TimesNear9e15UsAreTooLargeNotNegative) {
  for (const char* big : {"9223372036854779", "9223372036854775", "4700000000000000", "9.2e15"}) {
    const std::string d = load_error(op("1", big));
    EXPECT_NE(d.find("field 'dur'"), std::string::npos) << d;
    EXPECT_NE(d.find("too large"), std::string::npos) << d;
    EXPECT_EQ(d.find("non-negative"), std::string::npos) << d;
    const std::string t = load_error(op(big, "1"));
    EXPECT_NE(t.find("field 'ts'"), std::string::npos) << t;
    EXPECT_NE(t.find("too large"), std::string::npos) << t;
  }
  const std::string end = load_error(op("4000000000000000", "900000000000000"));
  EXPECT_NE(end.find("ends too late"), std::string::npos) << end;
  EXPECT_EQ(load_error(op("1623142623460111", "5")), "");  // an epoch time in us is fine
  int64_t ns = 0;
  EXPECT_FALSE(lumos::trace::parse_us_token_to_ns("9223372036854779", &ns));
  EXPECT_TRUE(lumos::trace::parse_us_token_to_ns("4611686018427387", &ns));
  EXPECT_EQ(ns, 4611686018427387000);
}

// Row 18: rank 2^32 + 5 was read as rank 5 and device 2^32 + 3 as device 3.
TEST(FieldRanges, RanksAndDevicesBeyondInt32AreRefusedNotTruncated) {
  const std::string ok = R"J({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1})J";
  const std::string rank = load_error(
      R"J({"distributedInfo":{"rank":4294967301,"world_size":8},"traceEvents":[)J" + ok + "]}");
  EXPECT_NE(rank.find("field 'distributedInfo.rank'"), std::string::npos) << rank;
  EXPECT_NE(rank.find("4294967301"), std::string::npos) << rank;
  const std::string neg =
      load_error(R"J({"distributedInfo":{"rank":-2,"world_size":8},"traceEvents":[)J" + ok + "]}");
  EXPECT_NE(neg.find("field 'distributedInfo.rank'"), std::string::npos) << neg;
  const std::string world = load_error(
      R"J({"distributedInfo":{"rank":0,"world_size":4294967304},"traceEvents":[)J" + ok + "]}");
  EXPECT_NE(world.find("field 'distributedInfo.world_size'"), std::string::npos) << world;
  const std::string dev = load_error(kernel_with_args(R"J("device":4294967299,"stream":7)J"));
  EXPECT_NE(dev.find("field 'args.device'"), std::string::npos) << dev;
  EXPECT_NE(dev.find("4294967299"), std::string::npos) << dev;
  const std::string pid = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":4294967299,"tid":7,"ts":1,"dur":1}]})J");
  EXPECT_NE(pid.find("field 'pid'"), std::string::npos) << pid;
  const std::string group = load_error(kernel_with_args(R"J("Group size":4294967304)J"));
  EXPECT_EQ(group.find("Group size"), std::string::npos) << "not a collective kernel: " << group;
  const std::string fine =
      load_error(R"J({"distributedInfo":{"rank":3,"world_size":8},"traceEvents":[)J" + ok + "]}");
  EXPECT_EQ(fine, "");
}

TEST(FieldRanges, CollectiveGroupSizesBeyondInt32AreRefused) {
  const std::string e = load_error(
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)","pid":0,"tid":7,"ts":1,"dur":1,"args":{"Group size":4294967304}}]})J");
  EXPECT_NE(e.find("field 'args.Group size'"), std::string::npos) << e;
}
