// The per-node update of the batch replay's CPU backend (the device kernel's, lanes_thread.hpp,
// does the same arithmetic in a GPU thread's loop order, held equal by the device-body tests).
// Plain C++ for a host compiler; __host__ __device__ when nvcc compiles it. Also the GPU backend's
// tile choice, plain host arithmetic so that it is tested without a GPU
// (tests/host/replay/tile_choice_test.cpp).
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "cost/gemm_core.hpp"
#include "graph/graph.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::replay {

// The graph as the kernels read it: raw arrays, predecessor CSR, nodes in topological order.
struct BatchGraphView {
  uint32_t nodes = 0;
  const uint32_t* pred_offset = nullptr;  // nodes + 1
  const uint32_t* pred_index = nullptr;
  const double* pred_lag_us = nullptr;
  const double* base_dur_us = nullptr;  // traced duration
  const uint8_t* cls = nullptr;         // graph::NodeClass
};

// Per-variant state planes, each [node][stride] with variants contiguous.
struct BatchState {
  uint32_t stride = 0;  // variants per plane row
  double* finish_us = nullptr;
  float* cp_compute_us = nullptr;  // compute + memory time on the path that sets finish
  float* cp_comm_us = nullptr;     // communication time on it
};

// Optional per-variant pricing of GEMM nodes with the cost model: a node with a GEMM key takes
// its traced duration times (model time on the variant's GPU / model time on the traced GPU),
// instead of its class's speed factor.
// Keys of this dtype price kernels that are not GEMMs by a fixed ratio per GPU (attention at the
// GPU's matrix rate, memory-bound kernels at its HBM bandwidth): BatchGemmView::ratio.
constexpr uint8_t kRatioKey = 255;

struct BatchGemmView {
  const int32_t* node_key = nullptr;             // per node: GEMM key, -1 when not priced
  const int64_t* shape = nullptr;                // per key: m, n, k, batch
  const uint8_t* dtype = nullptr;                // per key: cost::Dtype, or kRatioKey
  const double* traced_us = nullptr;             // per key: model time on the traced GPU
  const cost::GemmCoreParams* params = nullptr;  // [gpu * kNumDtypes + dtype]
  const uint16_t* variant_gpu = nullptr;         // per variant (absolute index): GPU index
  const double* ratio = nullptr;                 // [key * gpus + gpu]: factor of a kRatioKey key
  const double* gpu_speed = nullptr;             // [gpu]: speed-up of every priced node (null: 1)
  uint32_t num_dtypes = 5;
  uint32_t gpus = 0;
};

// The factor on the traced duration of the nodes of `key` on GPU column `gpu`: the cost model's
// time there over its time on the traced GPU (or the key's ratio), over the column's speed-up.
LUMOS_HD double gemm_key_factor(const BatchGemmView& g, int32_t key, uint32_t gpu) {
  double f;
  if (g.dtype[key] == kRatioKey) {
    f = g.ratio[static_cast<uint64_t>(key) * g.gpus + gpu];
  } else {
    const int64_t* sh = g.shape + 4 * static_cast<int64_t>(key);
    const cost::GemmCoreParams& p = g.params[gpu * g.num_dtypes + g.dtype[key]];
    f = cost::gemm_core_time(p, sh[0], sh[1], sh[2], sh[3]).time_us / g.traced_us[key];
  }
  return g.gpu_speed ? f / g.gpu_speed[gpu] : f;
}

// graph::NodeClass values as the kernels compare them (the class array is read as bytes).
constexpr uint8_t kClassCompute = 2, kClassComm = 3, kClassMemory = 4;
static_assert(sizeof(graph::NodeClass) == sizeof(uint8_t), "the class array is read as uint8_t");
static_assert(kClassCompute == static_cast<uint8_t>(graph::NodeClass::kCompute));
static_assert(kClassComm == static_cast<uint8_t>(graph::NodeClass::kComm));
static_assert(kClassMemory == static_cast<uint8_t>(graph::NodeClass::kMemory));
// Speed factors are indexed by class: kMemory is the last graph::NodeClass.
static_assert(kNumNodeClasses == static_cast<int>(graph::NodeClass::kMemory) + 1);

// Duration of node n in the variant whose speed factor for n's class is `speed`.
LUMOS_HD double batch_duration(double base_us, float speed) {
  return base_us / static_cast<double>(speed);
}

// Duration of node n in row variant v (absolute variant v0 + v).
LUMOS_HD double batch_node_duration(const BatchGraphView& g, const BatchGemmView* gemm, uint32_t n,
                                    uint32_t v, uint32_t v0, const float* speed) {
  if (gemm && gemm->node_key[n] >= 0)
    return g.base_dur_us[n] * gemm_key_factor(*gemm, gemm->node_key[n], gemm->variant_gpu[v0 + v]);
  return batch_duration(g.base_dur_us[n], speed[v]);
}

// One instruction of a replay program for the variants [v_begin, v_end) of a tile, as the CPU
// backend runs it: start = max over predecessors (finish + lag), read from the registers
// `operand_row` lists (in pred_index order); finish = start + traced duration x factor(v), where
// `factor` gives the node's slot factor (slot_table.hpp) of row variant v; written to register
// `dst_row`. The path bookkeeping follows the first predecessor reaching the maximum. The loop over
// variants is innermost, so that every access is a contiguous row and the loops vectorize
// (keeping a few lanes in locals over the predecessors, as the device kernel does, measured 2-4x
// slower on the CPU: the compilers do not keep such arrays in vector registers). The device
// kernel (lanes_thread.hpp) does the same arithmetic in the same order, held equal by the
// device-body tests.
template <class Factor>
LUMOS_HD void batch_node_update(const BatchGraphView& g, const BatchState& s, uint32_t n,
                                uint32_t v_begin, uint32_t v_end, const Factor& factor,
                                const uint32_t* operand_row, uint32_t dst_row) {
  const uint32_t b = g.pred_offset[n], e = g.pred_offset[n + 1];
  const uint64_t out = dst_row;
  double* fn = s.finish_us + out * s.stride;
  float* cn = s.cp_compute_us + out * s.stride;
  float* mn = s.cp_comm_us + out * s.stride;
  if (b == e) {
    for (uint32_t v = v_begin; v < v_end; ++v) fn[v] = 0.0, cn[v] = 0.0f, mn[v] = 0.0f;
  } else {
    {
      const uint64_t row = static_cast<uint64_t>(operand_row[b]) * s.stride;
      const double lag = g.pred_lag_us[b];
      const double* fp = s.finish_us + row;
      const float* cp = s.cp_compute_us + row;
      const float* mp = s.cp_comm_us + row;
      for (uint32_t v = v_begin; v < v_end; ++v) fn[v] = fp[v] + lag, cn[v] = cp[v], mn[v] = mp[v];
    }
    for (uint32_t k = b + 1; k < e; ++k) {
      const uint64_t row = static_cast<uint64_t>(operand_row[k]) * s.stride;
      const double lag = g.pred_lag_us[k];
      const double* fp = s.finish_us + row;
      const float* cp = s.cp_compute_us + row;
      const float* mp = s.cp_comm_us + row;
      for (uint32_t v = v_begin; v < v_end; ++v) {
        const double t = fp[v] + lag;
        const bool later = t > fn[v];
        fn[v] = later ? t : fn[v];
        cn[v] = later ? cp[v] : cn[v];
        mn[v] = later ? mp[v] : mn[v];
      }
    }
  }
  const double base = g.base_dur_us[n];
  const uint8_t c = g.cls[n];
  if (c == kClassCompute || c == kClassMemory) {
    for (uint32_t v = v_begin; v < v_end; ++v) {
      const double dur = base * factor(v);
      fn[v] += dur, cn[v] += static_cast<float>(dur);
    }
  } else if (c == kClassComm) {
    for (uint32_t v = v_begin; v < v_end; ++v) {
      const double dur = base * factor(v);
      fn[v] += dur, mn[v] += static_cast<float>(dur);
    }
  } else {
    for (uint32_t v = v_begin; v < v_end; ++v) fn[v] += base * factor(v);
  }
}

// batch_node_update's finish times alone, for callers that need the makespan and the steps but
// not the critical path's composition (a sweep): the same arithmetic on the finish plane, so the
// same bits, a third of the state traffic.
template <class Factor>
LUMOS_HD void batch_node_finish(const BatchGraphView& g, const BatchState& s, uint32_t n,
                                uint32_t v_begin, uint32_t v_end, const Factor& factor,
                                const uint32_t* operand_row, uint32_t dst_row) {
  const uint32_t b = g.pred_offset[n], e = g.pred_offset[n + 1];
  double* fn = s.finish_us + static_cast<uint64_t>(dst_row) * s.stride;
  if (b == e) {
    for (uint32_t v = v_begin; v < v_end; ++v) fn[v] = 0.0;
  } else {
    {
      const double lag = g.pred_lag_us[b];
      const double* fp = s.finish_us + static_cast<uint64_t>(operand_row[b]) * s.stride;
      for (uint32_t v = v_begin; v < v_end; ++v) fn[v] = fp[v] + lag;
    }
    for (uint32_t k = b + 1; k < e; ++k) {
      const double lag = g.pred_lag_us[k];
      const double* fp = s.finish_us + static_cast<uint64_t>(operand_row[k]) * s.stride;
      for (uint32_t v = v_begin; v < v_end; ++v) {
        const double t = fp[v] + lag;
        fn[v] = t > fn[v] ? t : fn[v];
      }
    }
  }
  const double base = g.base_dur_us[n];
  for (uint32_t v = v_begin; v < v_end; ++v) fn[v] += base * factor(v);
}

// The start of node n (the max over its predecessors of finish + lag, 0 without any) for the
// variants [v_begin, v_end) of a tile, into out[v]: the start of a step is its marker's start.
// Read right after the node's instruction, while its operands' registers still hold them (a
// register is reused only by a later instruction).
LUMOS_HD void batch_node_start(const BatchGraphView& g, const BatchState& s, uint32_t n,
                               uint32_t v_begin, uint32_t v_end, const uint32_t* operand_row,
                               double* out) {
  const uint32_t b = g.pred_offset[n], e = g.pred_offset[n + 1];
  for (uint32_t v = v_begin; v < v_end; ++v) out[v] = 0.0;
  for (uint32_t k = b; k < e; ++k) {
    const double lag = g.pred_lag_us[k];
    const double* fp = s.finish_us + static_cast<uint64_t>(operand_row[k]) * s.stride;
    for (uint32_t v = v_begin; v < v_end; ++v) {
      const double t = fp[v] + lag;
      out[v] = k == b || t > out[v] ? t : out[v];
    }
  }
}

}  // namespace lumos::replay
