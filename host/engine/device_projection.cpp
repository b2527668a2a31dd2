#include "engine/device_projection.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace lumos::engine {

namespace {

// Instructions of one thread of the replay kernel (cuda/batch_replay_cuda.cu, the body in
// host/replay/program_thread.hpp), counted in its PTX: `scripts/ptx-counts.sh` prints the size of
// every basic block (nvcc 13.0, -arch=sm_90 -O3 -fmad=false, 2026-11-30). A node on the common
// path (one predecessor, a class factor, no step mark) runs the node loop's blocks on that path,
// 156 instructions (12 + 5 + 63 + 9 + 4 + 28 + 19 + 12 + 4); every further predecessor 22 (a
// block of the unrolled predecessor loop, the winner's two path sums loaded). PTX is not SASS: the
// count is a guide to within a few tens of percent, to be replaced by a GPU measurement.
constexpr double kPtxPerNode = 156, kPtxPerExtraPred = 22;
// State bytes per node-variant: each predecessor's finish (8) and, for the one that wins, its two
// path sums (8); the node's finish and sums written (16) and its finish read back for the ends
// (8); its slot factor (8).
constexpr double kBytesPerPred = 16, kBytesPerNode = 32;
// Threads resident per SM on sm_80/sm_90 (CUDA programming guide, compute capabilities table).
constexpr double kResidentThreadsPerSm = 2048;
// L2 bandwidth, the low end of the "~5-10 TB/s" published for H100 (calibration.md §2.2, quack's
// memory hierarchy table); used for GPUs of that table's size class too.
constexpr double kL2BytesPerS = 5e12;

}  // namespace

DeviceProjection project_device_replay(const graph::Graph& g, const replay::ReplayProgram& program,
                                       const cost::GpuSpec& gpu) {
  const auto& fp32 = gpu.peak_tflops[static_cast<int>(cost::Dtype::kFp32)];
  LUMOS_EXPECT(fp32.has_value() && gpu.sms > 0 && gpu.hbm_gbps > 0,
               "device projection: kernels_db/gpus.json gives no FP32 peak, SM count or HBM "
               "bandwidth for " +
                   gpu.name);
  DeviceProjection p;
  p.gpu = gpu.name;
  const double nodes = std::max<double>(1, g.num_nodes());
  p.preds_per_node = g.num_edges() / nodes;
  // A node has at least one predecessor on the common path; sources cost about as much.
  p.instructions_per_node_variant =
      kPtxPerNode + kPtxPerExtraPred * std::max(0.0, p.preds_per_node - 1);
  // One warp instruction per SM partition per clock: the FP32 lanes' rate, FP32 peak / 2 (a
  // fused multiply-add counts two FLOPs), in thread instructions.
  p.thread_instructions_per_s = *fp32 * 1e12 / 2;
  p.issue_bound = p.thread_instructions_per_s / p.instructions_per_node_variant;
  p.state_bytes_per_node_variant = kBytesPerNode + kBytesPerPred * p.preds_per_node;
  p.resident_state_bytes = 16.0 * program.max_live * kResidentThreadsPerSm * gpu.sms;
  const bool in_l2 = gpu.l2_mib && p.resident_state_bytes <= *gpu.l2_mib * 1024 * 1024;
  p.state_level = in_l2 ? "L2" : "HBM";
  p.state_bytes_per_s = in_l2 ? kL2BytesPerS : gpu.hbm_gbps * 1e9;
  p.state_bound = p.state_bytes_per_s / p.state_bytes_per_node_variant;
  p.projected = std::min(p.issue_bound, p.state_bound);
  p.limit = p.issue_bound <= p.state_bound ? "issue" : "state";
  return p;
}

}  // namespace lumos::engine
