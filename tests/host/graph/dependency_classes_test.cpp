// Each of Lumos's dependency classes, on a tiny hand-written trace: the edge exists, its lag keeps
// the measured gap, and changing the predecessor's duration moves the dependent by that much.
#include <gtest/gtest.h>

#include "replay/reference_replay.hpp"
#include "support/graph_test_util.hpp"

using lumos::graph::EdgeKind;
using lumos::graph::NodeKind;
using lumos::replay::reference_replay;
using lumos::testing::build;
using lumos::testing::has_edge;
using lumos::testing::lag;
using lumos::testing::node;
using lumos::trace::KinetoWriter;

namespace {

// Start of `v` when node `changed` lasts `extra_us` longer than measured.
double start_with_extra(const lumos::graph::Graph& g, lumos::graph::NodeId changed, double extra_us,
                        lumos::graph::NodeId v) {
  std::vector<double> dur = g.dur_us;
  dur[changed] += extra_us;
  return reference_replay(g, &dur).start_us[v];
}

}  // namespace

TEST(IntraThread, ConsecutiveOperatorsKeepTheirGap) {
  KinetoWriter w;
  w.cpu_op(1, "A", 0, 10);
  w.cpu_op(1, "B", 15, 10);
  const auto b = build(w);
  const auto a = node(b.g(), "A"), bb = node(b.g(), "B");
  ASSERT_TRUE(has_edge(b.g(), a, bb, EdgeKind::kIntraThread));
  EXPECT_DOUBLE_EQ(lag(b.g(), a, bb), 5.0);
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), a, 10, bb), 25.0);
}

TEST(IntraThread, OperatorIsSplitAroundItsRuntimeCalls) {
  KinetoWriter w;
  w.cpu_op(1, "aten::mm", 0, 30);
  w.launch(1, "cudaLaunchKernel", 10, 5, "kernel", "gemm", 0, 7, 16, 4);
  const auto b = build(w);
  const auto head = node(b.g(), "aten::mm", 0), tail = node(b.g(), "aten::mm", 1);
  const auto call = node(b.g(), "cudaLaunchKernel");
  EXPECT_DOUBLE_EQ(b.g().dur_us[head], 10.0);
  EXPECT_DOUBLE_EQ(b.g().dur_us[tail], 15.0);
  EXPECT_TRUE(has_edge(b.g(), head, call, EdgeKind::kIntraThread));
  EXPECT_TRUE(has_edge(b.g(), call, tail, EdgeKind::kIntraThread));
}

TEST(InterThread, ThreadWokenByAnotherThreadFollowsIt) {
  KinetoWriter w;
  w.cpu_op(1, "forward", 0, 100);
  w.cpu_op(2, "backward", 150, 240);  // ends at 390
  w.cpu_op(1, "optimizer", 400, 10);
  const auto b = build(w);
  const auto bwd = node(b.g(), "backward"), opt = node(b.g(), "optimizer");
  ASSERT_TRUE(has_edge(b.g(), bwd, opt, EdgeKind::kInterThread));
  EXPECT_DOUBLE_EQ(lag(b.g(), bwd, opt), 10.0);
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), bwd, 100, opt), 500.0);
  // The first op of the backward thread was woken by the forward op (gap from thread start).
  EXPECT_TRUE(has_edge(b.g(), node(b.g(), "forward"), bwd, EdgeKind::kInterThread) ||
              b.g().pred_kind[b.g().pred_offset[bwd]] == EdgeKind::kOrigin);
}

TEST(Launch, KernelFollowsItsLaunchByCorrelation) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 10, "kernel", "k", 0, 7, 15, 100);
  const auto b = build(w);
  const auto call = node(b.g(), "cudaLaunchKernel"), k = node(b.g(), "k");
  ASSERT_TRUE(has_edge(b.g(), call, k, EdgeKind::kLaunch));
  EXPECT_DOUBLE_EQ(lag(b.g(), call, k), 5.0);
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), call, 20, k), 35.0);
}

TEST(GpuToCpuSync, StreamSyncWaitsForTheStreamsLastKernel) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 10, "kernel", "k", 0, 7, 15, 100);
  const int64_t corr = w.runtime(1, "cudaStreamSynchronize", 20, 98);  // returns at 118
  w.sync("Stream Sync", corr, 0, 7, 20, 98);
  w.cpu_op(1, "after", 120, 5);
  const auto b = build(w);
  const auto k = node(b.g(), "k"), s = node(b.g(), "cudaStreamSynchronize"),
             after = node(b.g(), "after");
  ASSERT_TRUE(has_edge(b.g(), k, s, EdgeKind::kGpuToCpuSync));
  EXPECT_EQ(b.g().kind[s], NodeKind::kSync);
  EXPECT_DOUBLE_EQ(b.g().measured_start_us[s], 115.0);  // in effect it starts when k is done
  EXPECT_DOUBLE_EQ(b.g().dur_us[s], 3.0);
  // Kernel 50 us shorter: the sync returns 50 us earlier, and so does what follows it.
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), k, -50, after), 70.0);
}

TEST(GpuToCpuSync, ContextSyncWaitsForEveryStream) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 5, "kernel", "k7", 0, 7, 8, 50);
  w.launch(1, "cudaLaunchKernel", 6, 5, "kernel", "k20", 0, 20, 12, 80);  // ends at 92
  const int64_t corr = w.runtime(1, "cudaDeviceSynchronize", 20, 74);     // returns at 94
  w.sync("Context Sync", corr, 0, -1, 20, 74);
  const auto b = build(w);
  const auto s = node(b.g(), "cudaDeviceSynchronize");
  EXPECT_TRUE(has_edge(b.g(), node(b.g(), "k7"), s, EdgeKind::kGpuToCpuSync));
  EXPECT_TRUE(has_edge(b.g(), node(b.g(), "k20"), s, EdgeKind::kGpuToCpuSync));
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), node(b.g(), "k7"), 100, s), 158.0);
}

TEST(GpuToCpuSync, EventSyncWaitsForTheKernelBeforeTheRecord) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 5, "kernel", "k", 0, 7, 8, 50);  // ends 58
  const int64_t rec = w.runtime(1, "cudaEventRecord", 6, 2);
  const int64_t es = w.runtime(1, "cudaEventSynchronize", 10, 50);  // returns 60
  w.sync("Event Sync", es, 0, -1, 10, 50, 7, rec);
  const auto b = build(w);
  const auto k = node(b.g(), "k"), s = node(b.g(), "cudaEventSynchronize");
  ASSERT_TRUE(has_edge(b.g(), k, s, EdgeKind::kGpuToCpuSync));
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), k, 40, s), 98.0);
}

TEST(GpuToCpuSync, BlockingCopyIsSplitIntoEnqueueAndWait) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 5, "kernel", "k", 0, 7, 6, 100);  // ends 106
  w.launch(1, "cudaMemcpyAsync", 10, 100, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 0, 7,
           106, 2);
  const auto b = build(w);
  const auto copy = node(b.g(), "Memcpy DtoH (Device -> Pageable)");
  const auto call = node(b.g(), "cudaMemcpyAsync", 0), wait = node(b.g(), "cudaMemcpyAsync", 1);
  EXPECT_EQ(b.g().kind[wait], NodeKind::kSync);
  EXPECT_TRUE(has_edge(b.g(), call, copy, EdgeKind::kLaunch));
  EXPECT_TRUE(has_edge(b.g(), copy, wait, EdgeKind::kGpuToCpuSync));
  EXPECT_LT(b.g().dur_us[call], 10.0);  // enqueueing, not the wait for the kernel before it
  // The kernel before the copy 50 us shorter: the copy and the call's return move with it.
  const auto r = start_with_extra(b.g(), node(b.g(), "k"), -50, wait);
  EXPECT_DOUBLE_EQ(r, 58.0);
}

TEST(IntraStream, BusyStreamRunsKernelsBackToBack) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 5, "kernel", "k1", 0, 7, 8, 100);   // 8..108
  w.launch(1, "cudaLaunchKernel", 6, 5, "kernel", "k2", 0, 7, 110, 50);  // launched while k1 runs
  const auto b = build(w);
  const auto k1 = node(b.g(), "k1"), k2 = node(b.g(), "k2");
  ASSERT_TRUE(has_edge(b.g(), k1, k2, EdgeKind::kIntraStream));
  EXPECT_DOUBLE_EQ(lag(b.g(), k1, k2), 2.0);
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), k1, 30, k2), 140.0);
}

TEST(InterStream, StreamWaitEventOrdersKernelsAcrossStreams) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 5, "kernel", "producer", 0, 7, 8, 100);  // 8..108
  const int64_t rec = w.runtime(1, "cudaEventRecord", 6, 2);
  const int64_t wait = w.runtime(1, "cudaStreamWaitEvent", 9, 2);
  w.sync("Stream Wait Event", wait, 0, 20, 9, 2, 7, rec);
  w.launch(1, "cudaLaunchKernel", 12, 5, "kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", 0,
           20, 109, 40);
  const auto b = build(w);
  const auto p = node(b.g(), "producer"),
             c = node(b.g(), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)");
  ASSERT_TRUE(has_edge(b.g(), p, c, EdgeKind::kInterStream));
  EXPECT_DOUBLE_EQ(lag(b.g(), p, c), 1.0);
  EXPECT_DOUBLE_EQ(start_with_extra(b.g(), p, 50, c), 159.0);
  EXPECT_EQ(b.g().cls[c], lumos::graph::NodeClass::kComm);
}

TEST(InterStream, OlderTracesWithoutSyncEventsAreInferredFromLaunchOrder) {
  KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 5, "kernel", "producer", 0, 7, 8, 100);
  w.runtime(1, "cudaEventRecord", 6, 2);
  w.runtime(1, "cudaStreamWaitEvent", 9, 2);
  w.launch(1, "cudaLaunchKernel", 12, 5, "kernel", "consumer", 0, 20, 109, 40);
  const auto b = build(w);
  EXPECT_TRUE(
      has_edge(b.g(), node(b.g(), "producer"), node(b.g(), "consumer"), EdgeKind::kInterStream));
}
