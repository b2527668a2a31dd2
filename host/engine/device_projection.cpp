#include "engine/device_projection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "replay/lanes_thread.hpp"
#include "replay/packed_program.hpp"

namespace lumos::engine {

namespace {

// Instructions of one thread of the replay kernel (cuda/batch_replay_cuda.cu, the body in
// host/replay/lanes_thread.hpp, kLanesPerThread = 4 lanes), counted in its PTX:
// `scripts/ptx-counts.sh` prints the size of every basic block (nvcc 13.0, -arch=sm_90 -O3
// -fmad=false, 2026-12-01, recounted on the final kernel). Per node, for the four lanes,
// [finish times alone, with the path]:
// - kPtxNode: the node loop's blocks for a node whose one operand is forwarded from the previous
//   instruction, with a row slot, whose finish is not stored, none of the rare flags, a compute
//   kernel (finish: 29 + 7 + 3 + 9 + 15 + 3 + 6; path: 45 + 7 + 3 + 9 + 17 + 17 + 6 + 3 + 6);
// - kPtxFirstFromMemory: its first operand read from the register file instead (3 + 4 + 4;
//   4 + 8 + 12), kPtxStore: its finish stored (3 + 4 + 4; 4 + 8 + 12);
// - each further operand, forwarded (11 + 16; 19 + 24) or read (14 + 4 + 4 + 16;
//   19 + 3 + 10 + 12 + 24).
// The loop reloads kernel parameters (ld.param), which SASS mostly folds into constant operands.
// Divided over the lanes. PTX is not SASS: the count is a guide to within a few tens of percent,
// to be replaced by a GPU measurement.
constexpr double kPtxNode[2] = {72, 113}, kPtxFirstFromMemory[2] = {11, 24},
                 kPtxStore[2] = {11, 24}, kPtxExtraForwarded[2] = {27, 43},
                 kPtxExtraFromMemory[2] = {38, 68};
// Instructions that issue at less than one warp instruction per partition and clock, counted per
// lane, weighted by the issue slots they take: FP64 add, multiply and compare at half the FP32
// rate (the H100 SXM datasheet: 34 FP64 against 67 FP32 TFLOP/s, published figures; the H200 has
// the H100's rates), 2 slots; the path kernel's conversion of a duration to float, 8 slots
// (16 per clock per SM, the CUDA programming guide's throughput table for conversions from
// 64-bit types, a published figure not checked on a GPU). Per lane: the node's multiply and add,
// an add per operand and a compare per further operand, one conversion with the path.
constexpr double kFp64Slots = 2, kConversionSlots = 8;
// Threads resident per SM on sm_80/sm_90 and shared memory per SM (CUDA programming guide,
// compute capabilities table; calibration.md §2.2: 228 KB max shared on H100), with the 1 KB
// the runtime reserves per block.
constexpr double kResidentThreadsPerSm = 2048, kSharedBytesPerSm = 228 * 1024,
                 kReservedSharedPerBlock = 1024;
// Registers per thread of the two kernels ([finish times alone, with the path]; `ptxas -v`
// through scripts/ptx-counts.sh, nvcc 13.0, sm_90, no spills) and the register file of an SM
// (64K 32-bit registers on sm_80/sm_90, allocated per warp in units of 256).
constexpr double kRegistersPerThread[2] = {64, 96}, kRegistersPerSm = 65536;
// Shared memory and L2 bandwidth of the whole GPU, the low ends of the "~20-30 TB/s" and
// "~5-10 TB/s" published for H100 (calibration.md §2.2, quack's memory hierarchy table); used
// for GPUs of that table's size class too.
constexpr double kSharedBytesPerS = 20e12, kL2BytesPerS = 5e12;
// A slot factor read per node-variant (8 B), through the same L1 / shared-memory path.
constexpr double kFactorBytes = 8;

}  // namespace

DeviceProjection project_device_replay(const graph::Graph& g, const replay::ReplayProgram& program,
                                       const cost::GpuSpec& gpu, bool critical_path) {
  const auto& fp32 = gpu.peak_tflops[static_cast<int>(cost::Dtype::kFp32)];
  LUMOS_EXPECT(fp32.has_value() && gpu.sms > 0 && gpu.hbm_gbps > 0,
               "device projection: kernels_db/gpus.json gives no FP32 peak, SM count or HBM "
               "bandwidth for " +
                   gpu.name);
  DeviceProjection p;
  p.gpu = gpu.name;
  p.critical_path = critical_path;
  const int k = critical_path ? 1 : 0;
  const double nodes = std::max<double>(1, g.num_nodes());
  p.preds_per_node = g.num_edges() / nodes;
  // Which operands are forwarded and which finishes are stored (replay/packed_program.hpp).
  const replay::Forwarding fw = replay::forwarding(program, g);
  p.shared_registers = replay::lanes_shared_regs(program.short_regs, critical_path);
  double ptx = 0, shared_accesses = 0, global_accesses = 0;
  for (graph::NodeId v = 0; v < g.num_nodes(); ++v) {
    ptx += kPtxNode[k];  // sources cost about as much as a node with one forwarded operand
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const bool first = e == g.pred_offset[v];
      if (fw.forward[e]) {
        if (!first) ptx += kPtxExtraForwarded[k];
        continue;
      }
      ptx += first ? kPtxFirstFromMemory[k] : kPtxExtraFromMemory[k];
      (program.op_reg[e] < p.shared_registers ? shared_accesses : global_accesses) += 1;
    }
    if (fw.no_store[v]) continue;
    ptx += kPtxStore[k];
    (program.dst[v] < p.shared_registers ? shared_accesses : global_accesses) += 1;
  }
  p.instructions_per_node_variant = ptx / nodes / replay::kLanesPerThread;
  const double fp64_per_node = 2 + std::max(0.0, 2 * p.preds_per_node - 1);
  p.issue_slots_per_node_variant = p.instructions_per_node_variant +
                                   (kFp64Slots - 1) * fp64_per_node +
                                   (critical_path ? kConversionSlots - 1 : 0.0);
  // One warp instruction per SM partition per clock: the FP32 lanes' rate, FP32 peak / 2 (a
  // fused multiply-add counts two FLOPs), in thread instructions.
  p.thread_instructions_per_s = *fp32 * 1e12 / 2;
  p.issue_bound = p.thread_instructions_per_s / p.issue_slots_per_node_variant;

  const double bytes = replay::lanes_register_bytes(critical_path);
  const double block_shared = replay::lanes_shared_bytes(p.shared_registers, critical_path);
  const double warp_registers = std::ceil(kRegistersPerThread[k] * 32 / 256) * 256;
  const double warps_per_block = replay::kLanesBlockThreads / 32.0;
  const double blocks_per_sm =
      std::min({kResidentThreadsPerSm / replay::kLanesBlockThreads,
                std::floor(kSharedBytesPerSm / (block_shared + kReservedSharedPerBlock)),
                std::floor(kRegistersPerSm / (warp_registers * warps_per_block))});
  p.warps_per_sm = blocks_per_sm * replay::kLanesBlockThreads / 32;
  p.shared_bytes_per_node_variant = shared_accesses / nodes * bytes + kFactorBytes;
  p.shared_bytes_per_s = kSharedBytesPerS;
  p.shared_bound = p.shared_bytes_per_s / p.shared_bytes_per_node_variant;

  p.state_bytes_per_node_variant = global_accesses / nodes * bytes;
  const double lanes =
      blocks_per_sm * replay::kLanesBlockThreads * replay::kLanesPerThread * gpu.sms;
  p.resident_state_bytes =
      bytes * std::max(0.0, static_cast<double>(program.max_live) - p.shared_registers) * lanes;
  const bool in_l2 = gpu.l2_mib && p.resident_state_bytes <= *gpu.l2_mib * 1024 * 1024;
  p.state_level = in_l2 ? "L2" : "HBM";
  p.state_bytes_per_s = in_l2 ? kL2BytesPerS : gpu.hbm_gbps * 1e9;
  p.state_bound = p.state_bytes_per_node_variant > 0
                      ? p.state_bytes_per_s / p.state_bytes_per_node_variant
                      : std::numeric_limits<double>::infinity();

  p.projected = std::min({p.issue_bound, p.shared_bound, p.state_bound});
  p.limit = p.projected == p.issue_bound    ? "issue"
            : p.projected == p.shared_bound ? "shared"
                                            : "state";
  return p;
}

}  // namespace lumos::engine
