// `lumos replay`: what a replay of traced steps answers. For one rank's trace: per-step measured
// vs replayed time (on the chosen engine, under optional per-class speed factors), the breakdown,
// busy time per stream, the critical path and optionally a transplant. For a folder of per-rank
// traces: the joined job, replayed under straggler what-ifs, with who waited for whom.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "graph/load_input.hpp"
#include "graph/multi_rank.hpp"
#include "replay/collective_waits.hpp"
#include "replay/critical_path.hpp"
#include "replay/gpu_idle.hpp"
#include "replay/rank_windows.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "replay/top_ops.hpp"
#include "whatif/peer_waits.hpp"
#include "whatif/stragglers.hpp"
#include "whatif/transplant.hpp"

namespace lumos::estimate {

struct ReplayRequest {
  std::string speed;  // per-class factors, "compute=2,comm=0.5"; "" = as traced
  // Or the variant itself (one variant; `speed` must then be empty), with kernels priced per GPU
  // (whatif::gemm_pricing) when `pricing` is given: a trace moved to another GPU.
  std::optional<replay::VariantBatch> variant;
  const replay::GemmPricing* pricing = nullptr;
  engine::Backend backend = engine::Backend::kAuto;
  replay::CriticalPathMode critical_path = replay::CriticalPathMode::kHtaWeights;
  std::optional<std::pair<int64_t, int64_t>> transplant;  // (from step M, predict step N)
};

struct ReplayAnswer {
  std::string backend;  // engine that produced the step times
  std::vector<replay::StepTime> steps;
  replay::Breakdown replayed, measured;  // summed over the steps' windows
  replay::IdleSplit idle;                // why the GPU was idle in the replayed windows
  std::vector<replay::OpTotal> top_kernels, top_cpu_ops;  // kTopOps each, most time first
  std::vector<replay::StreamBusy> streams;
  replay::CriticalPath critical_path;
  std::optional<whatif::TransplantResult> transplant;
  replay::ReplayResult replay;   // the reference replay (for timelines)
  whatif::PeerWaits peer_waits;  // the traced communication: transfers and waits for peers
};

// Throws InputError for a bad speed spec, or a transplant on a graph file.
ReplayAnswer replay_trace(const graph::LoadedInput& in, const ReplayRequest& req);

// How many kernels and CPU operators a replay lists by time.
constexpr size_t kTopOps = 10;

struct JobReplay {
  graph::MultiRankResult job;
  replay::ReplayResult replay;
  std::vector<replay::StepTime> steps;
  replay::CollectiveWaits waits;
  std::vector<replay::RankWindows> ranks;  // breakdown and idle split per rank
  whatif::PeerWaits peer_waits;  // measured at the rendezvous, estimated where peers are missing
};

// allow_partial: see graph::load_multi_rank (missing ranks become warnings in job.warnings).
// `speed` ("compute=2,comm=0.5", "" = as traced) divides each class's durations on every rank,
// after the straggler edits, as `lumos replay TRACE --speed` does for one rank.
JobReplay replay_job(const std::string& dir, const whatif::StragglerEdits& edits,
                     bool allow_partial = false, const std::string& speed = "");

}  // namespace lumos::estimate
