// Waits are not communication: one rank's NCCL kernels include the time spent waiting for their
// peers. The split into transfer and wait follows the rule of whatif/peer_waits.hpp exactly on a
// hand-written trace; on a job written by `lumos generate`, one rank's trace alone calibrates
// communication and predicts edited steps as the whole folder does, whose rendezvous measures
// the waits.
#include "whatif/peer_waits.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "common/format.hpp"
#include "cost/collective_model.hpp"
#include "estimate/trace_structural.hpp"
#include "estimate/trace_whatif.hpp"
#include "generated_job.hpp"
#include "graph/load_input.hpp"

using lumos::graph::LoadedInput;
using lumos::testing::JobConfig;
using lumos::whatif::PeerWaits;
using lumos::whatif::TransferFrom;

namespace {

const lumos::cost::KernelsDb& db() {
  return lumos::cost::embedded_db();
}

PeerWaits waits_of(const LoadedInput& in) {
  return lumos::whatif::peer_waits(in.graph, lumos::whatif::classify_traced(in.tables(), db()),
                                   db());
}

// The model's time for a collective of the hand-written trace (8 ranks in one node).
double model_us(lumos::cost::Collective op, double bytes, int ranks) {
  const auto& gpu = db().gpu("h100");
  lumos::cost::CollectiveQuery q;
  q.op = op, q.bytes = bytes, q.ranks = ranks, q.ranks_per_node = ranks;
  return lumos::cost::collective_time(db(), gpu, db().default_topology_for(gpu), q).time_us;
}

std::string kernel(const char* name, double ts, double dur, const char* coll, int64_t nelems,
                   int group, const char* pg, int stream) {
  return lumos::strprintf(
      R"J({"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,)J"
      R"J("args":{"device":0,"stream":%d,"Collective name":"%s","dtype":"BFloat16",)J"
      R"J("In msg nelems":%lld,"Out msg nelems":%lld,"Group size":%d,"Process Group Name":"%s"}})J",
      name, stream, ts, dur, stream, coll, static_cast<long long>(nelems),
      static_cast<long long>(nelems), group, pg);
}

struct Job {
  lumos::testing::TempDir tmp;
  std::string folder, rank0;
  explicit Job(const JobConfig& c) : folder(tmp.file("job")) {
    lumos::testing::write_job(c, folder);
    for (const auto& e : std::filesystem::directory_iterator(folder))
      if (e.path().filename().string().rfind("stage0.", 0) == 0) rank0 = e.path().string();
  }
};

JobConfig pipelined_job() {
  JobConfig c;  // TP 2 x PP 2 x DP 4 over two nodes: pipeline messages cross the network
  c.layers = 8, c.gbs = 16;
  return c;
}

lumos::estimate::StructuralRequest request(const lumos::estimate::StructuralEdit& e = {}) {
  lumos::estimate::StructuralRequest r;
  r.model = lumos::model::preset("gpt3-15b");
  r.edit = e;
  return r;
}

}  // namespace

TEST(PeerWaits, ShortestInstanceOrTheModelIsTheTransfer) {
  using lumos::cost::Collective;
  const int64_t small = 1 << 20, big = 64LL << 20, msg = 12 << 20;  // bf16 elements
  const double m_small = model_us(Collective::kAllReduce, 2.0 * small, 8);
  const double m_big = model_us(Collective::kAllReduce, 2.0 * big, 8);
  const double m_p2p = model_us(Collective::kSendRecv, 2.0 * msg, 2);
  ASSERT_GT(m_small, 0);
  // Every instance of the small all-reduce took far longer than the model: each one waited.
  // The big one's shortest instance is within the model's reach: the others waited the rest.
  // A send and a receive of one size share their transfer, on groups of their own.
  const double big_us[3] = {1.5 * m_big, 1.5 * m_big + 100, 1.5 * m_big + 500};
  const double send_us = 1.2 * m_p2p, recv_us = 1.2 * m_p2p + 1000;
  std::string ev = kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0, 40 * m_small, "allreduce",
                          small, 8, "tp", 7);
  ev += "," + kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 1e5, 50 * m_small, "allreduce",
                     small, 8, "tp", 7);
  for (int i = 0; i < 3; ++i)
    ev += "," + kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 2e5 + 1e5 * i, big_us[i],
                       "allreduce", big, 8, "dp", 20);
  ev += "," + kernel("ncclDevKernel_SendRecv", 6e5, send_us, "send", msg, 2, "pp/fwd", 30);
  ev += "," + kernel("ncclDevKernel_SendRecv", 7e5, recv_us, "recv", msg, 2, "pp/bwd", 31);
  ev +=
      R"J(,{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16","pid":0,"tid":7,"ts":8e5,"dur":50,"args":{"device":0,"stream":7}})J";
  lumos::testing::TempDir tmp;
  const std::string path = tmp.write(
      "t.json",
      R"J({"distributedInfo":{"backend":"nccl","rank":0,"world_size":8},)J"
      R"J("deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[)J" +
          ev + "]}");
  const LoadedInput in = lumos::graph::load_input(path);
  const PeerWaits w = waits_of(in);
  ASSERT_EQ(w.kernels.size(), 7u);  // the GEMM is not communication
  auto kernels = w.kernels;         // in the order the trace ran them
  std::sort(kernels.begin(), kernels.end(), [&](const auto& a, const auto& b) {
    return in.graph.measured_start_us[a.node] < in.graph.measured_start_us[b.node];
  });
  const double expect_transfer[7] = {m_small,   m_small, big_us[0], big_us[0],
                                     big_us[0], send_us, send_us};
  const TransferFrom expect_from[7] = {TransferFrom::kModel,    TransferFrom::kModel,
                                       TransferFrom::kShortest, TransferFrom::kShortest,
                                       TransferFrom::kShortest, TransferFrom::kShortest,
                                       TransferFrom::kShortest};
  double wait = 0;
  for (size_t i = 0; i < 7; ++i) {
    const auto& k = kernels[i];
    SCOPED_TRACE(i);
    EXPECT_NEAR(k.transfer_us, expect_transfer[i], 0.01);
    EXPECT_NEAR(k.wait_us, k.traced_us - expect_transfer[i], 0.01);
    EXPECT_EQ(k.from, expect_from[i]);
    wait += k.traced_us - expect_transfer[i];
  }
  EXPECT_NEAR(w.wait_us, wait, 0.1);
  EXPECT_NEAR(w.transfer_us + w.wait_us, w.traced_us, 0.1);
  EXPECT_EQ(w.by_source[static_cast<size_t>(TransferFrom::kModel)], 2u);
}

TEST(PeerWaits, OneRanksReceivesWaitAndItsCollectivesDoNot) {
  const Job job(pipelined_job());
  const LoadedInput in = lumos::graph::load_input(job.rank0);
  const auto tk = lumos::whatif::classify_traced(in.tables(), db());
  const PeerWaits w = lumos::whatif::peer_waits(in.graph, tk, db());
  ASSERT_FALSE(w.kernels.empty());
  double recv_wait = 0;
  for (const auto& k : w.kernels) {
    size_t ti = 0;
    const auto* ck = tk.kernel_of(in.graph, k.node, &ti);
    ASSERT_NE(ck, nullptr);
    const auto& e = tk.tables[ti]->events[ck->event];
    const bool recv =
        tk.tables[ti]->collectives[e.collective].type == lumos::trace::CollectiveType::kRecv;
    if (recv)
      recv_wait += k.wait_us;
    else  // the generated job's collectives run without stragglers
      EXPECT_NEAR(k.wait_us, 0, 0.01) << in.graph.names[in.graph.name[k.node]];
  }
  // The first stage's backward receives wait for the rest of the pipeline's backward pass.
  EXPECT_GT(recv_wait, 0.5 * w.traced_us);
  EXPECT_NEAR(recv_wait, w.wait_us, 1.0);
}

TEST(PeerWaits, OneRanksTransfersMatchTheFoldersRendezvous) {
  const Job job(pipelined_job());
  const PeerWaits folder = waits_of(lumos::graph::load_job(job.folder));
  EXPECT_GT(folder.by_source[static_cast<size_t>(TransferFrom::kRendezvous)], 0u);
  const LoadedInput one = lumos::graph::load_input(job.rank0);
  const PeerWaits alone = waits_of(one);
  EXPECT_EQ(alone.by_source[static_cast<size_t>(TransferFrom::kRendezvous)], 0u);
  // Rank 0's kernels in the folder: their measured transfers against the estimate from its file.
  const LoadedInput all = lumos::graph::load_job(job.folder);
  double folder_rank0 = 0;
  for (const auto& k : folder.kernels)
    if (all.graph.resources[all.graph.resource[k.node]].rank == 0) folder_rank0 += k.transfer_us;
  EXPECT_NEAR(alone.transfer_us / folder_rank0, 1.0, 0.03);
}

TEST(PeerWaits, OneRanksTraceCalibratesCommunicationAsTheWholeFolder) {
  const Job job(pipelined_job());
  const auto folder =
      lumos::estimate::calibrate_trace(lumos::graph::load_job(job.folder), request(), db());
  const auto alone =
      lumos::estimate::calibrate_trace(lumos::graph::load_input(job.rank0), request(), db());
  const double f_folder = folder.calibration.factor("comm");
  const double f_alone = alone.calibration.factor("comm");
  EXPECT_NEAR(f_folder, 1.0, 0.03);  // the model's own job
  EXPECT_NEAR(f_alone / f_folder, 1.0, 0.03) << "comm x" << f_alone << " vs x" << f_folder;
  EXPECT_GT(alone.calibration.comm_waited_us, 0.5 * alone.calibration.comm_recorded_us);
}

TEST(PeerWaits, OneRanksTraceGivesTheFoldersEditedStep) {
  const Job job(pipelined_job());
  const LoadedInput folder = lumos::graph::load_job(job.folder);
  const LoadedInput alone = lumos::graph::load_input(job.rank0);
  lumos::estimate::StructuralEdit none, layers, dp, pp_up, pp_down;
  layers.layers = 16;
  dp.dp = 8;
  pp_up.pp = 4;
  pp_down.pp = 1;
  for (const auto& e : {none, layers, dp, pp_up, pp_down}) {
    // The answer each path gives (the traced graph edited, or the rebuild where it falls back).
    const double f = lumos::estimate::run_structural_whatif(folder, request(e), db()).predicted_us;
    const double a = lumos::estimate::run_structural_whatif(alone, request(e), db()).predicted_us;
    EXPECT_NEAR(a / f, 1.0, 0.03) << "layers " << e.layers.value_or(0) << " dp " << e.dp.value_or(0)
                                  << ": " << a << " us vs " << f << " us";
  }
}

TEST(PeerWaits, ADataParallelEditOfOneRanksTraceScalesTransfersNotWaits) {
  JobConfig c = pipelined_job();
  c.dp = 2, c.gbs = 8;  // one node: DP 8 moves the pipeline pairs across nodes
  const Job job(c);
  lumos::estimate::WhatifRequest req;
  req.dp = 8;
  const auto folder = lumos::estimate::run_whatif(lumos::graph::load_job(job.folder), req, db());
  const auto alone = lumos::estimate::run_whatif(lumos::graph::load_input(job.rank0), req, db());
  const double f = folder.result.makespan_us[0], a = alone.result.makespan_us[0];
  EXPECT_GT(f, 1.1 * folder.unedited_us);  // the edit matters
  // Scaling the receives' waits with their transfers would multiply them by the NIC/NVLink ratio.
  EXPECT_NEAR(a / f, 1.0, 0.03) << a << " us alone vs " << f << " us for the folder";
}
