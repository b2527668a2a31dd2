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
  const uint8_t* fast_accum = nullptr;           // per key: an FP8 forward GEMM (null: none)
  const double* fast_accum_speedup = nullptr;    // [gpu]: its speed-up where compute-bound
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
    const cost::GemmCoreResult r = cost::gemm_core_time(p, sh[0], sh[1], sh[2], sh[3]);
    // Fast accumulation speeds up the tensor cores' math, not a GEMM bound by its operands.
    const bool fast = g.fast_accum && g.fast_accum[key] && r.method != cost::kMemoryBound;
    f = (fast ? r.time_us / g.fast_accum_speedup[gpu] : r.time_us) / g.traced_us[key];
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

// How an instruction's pass over a tile finds each variant's start: the node has no
// predecessor, reads its only one, takes the later of its two, or merges its last into the
// maximum so far (kept in the destination row by the passes before). Which path sum the node's
// duration adds to.
enum class StartFrom { kZero, kOnly, kLaterOfTwo, kMergeLast };
enum class PathSum { kNone, kCompute, kComm };

// An operand's register rows (the path's two only with it) and its edge's lag.
struct OperandRows {
  const double* f = nullptr;
  const float* c = nullptr;
  const float* m = nullptr;
  double lag_us = 0;
};

// The pass that ends an instruction: each variant's start, from `from`, plus its duration, into
// the destination row, the duration added to the path sum `sum` chose (with_path). One pass over
// the row, not a pass that copies the start and one that adds the duration: every node writes
// its row once (a single-predecessor node reads 24 bytes and writes 16 per variant instead of 36
// and 28; with two predecessors, 40 and 16 instead of 60 and 32). The destination is never an
// operand (a register is freed only after its reader's instruction), hence the restrict.
// Operands: `p` (the only one, the last, or the first of two) and `q` (the second of two).
template <bool with_path, StartFrom from, PathSum sum, class Factor>
LUMOS_HD void batch_finish_pass(double* __restrict__ fn, float* __restrict__ cn,
                                float* __restrict__ mn, const OperandRows& p, const OperandRows& q,
                                double base, const Factor& factor, uint32_t v_begin,
                                uint32_t v_end) {
  const double* __restrict__ fp = p.f;
  const float* __restrict__ cp = p.c;
  const float* __restrict__ mp = p.m;
  const double* __restrict__ fq = q.f;
  const float* __restrict__ cq = q.c;
  const float* __restrict__ mq = q.m;
  const double lag = p.lag_us, lag_q = q.lag_us;
  for (uint32_t v = v_begin; v < v_end; ++v) {
    double start;
    float c = 0.0f, m = 0.0f;
    if constexpr (from == StartFrom::kZero) {
      start = 0.0;
    } else if constexpr (from == StartFrom::kOnly) {
      start = fp[v] + lag;
      if constexpr (with_path) c = cp[v], m = mp[v];
    } else if constexpr (from == StartFrom::kLaterOfTwo) {
      const double t0 = fp[v] + lag, t1 = fq[v] + lag_q;
      const bool later = t1 > t0;  // ties keep the first, as the other passes do
      start = later ? t1 : t0;
      if constexpr (with_path) c = later ? cq[v] : cp[v], m = later ? mq[v] : mp[v];
    } else {
      const double t = fp[v] + lag;
      const bool later = t > fn[v];
      start = later ? t : fn[v];
      if constexpr (with_path) c = later ? cp[v] : cn[v], m = later ? mp[v] : mn[v];
    }
    const double dur = base * factor(v);
    fn[v] = start + dur;
    if constexpr (with_path) {
      if constexpr (sum == PathSum::kCompute) c += static_cast<float>(dur);
      if constexpr (sum == PathSum::kComm) m += static_cast<float>(dur);
      cn[v] = c, mn[v] = m;
    }
  }
}

template <bool with_path, StartFrom from, class Factor>
LUMOS_HD void batch_finish_pass(PathSum sum, double* fn, float* cn, float* mn, const OperandRows& p,
                                const OperandRows& q, double base, const Factor& factor,
                                uint32_t v_begin, uint32_t v_end) {
  if (!with_path || sum == PathSum::kNone)
    batch_finish_pass<with_path, from, PathSum::kNone>(fn, cn, mn, p, q, base, factor, v_begin,
                                                       v_end);
  else if (sum == PathSum::kCompute)
    batch_finish_pass<with_path, from, PathSum::kCompute>(fn, cn, mn, p, q, base, factor, v_begin,
                                                          v_end);
  else
    batch_finish_pass<with_path, from, PathSum::kComm>(fn, cn, mn, p, q, base, factor, v_begin,
                                                       v_end);
}

// One instruction of a replay program for the variants [v_begin, v_end) of a tile, as the CPU
// backend runs it: start = max over predecessors (finish + lag), read from the registers
// `operand_row` lists (in pred_index order); finish = start + traced duration x factor(v), where
// `factor` gives the node's slot factor (slot_table.hpp) of row variant v; written to register
// `dst_row`. With the path (`with_path`), its compute and communication sums follow the first
// predecessor reaching the maximum; without it, only the finish plane is touched (a sweep's
// makespans and steps: the same bits, a third of the state traffic). The loop over variants is
// innermost, so that every access is a contiguous row and the loops vectorize (keeping a few
// lanes in locals over the predecessors, as the device kernel does, measured 2-4x slower on the
// CPU: the compilers do not keep such arrays in vector registers). The device kernel
// (lanes_thread.hpp) does the same arithmetic in the same order, held equal by the device-body
// tests.
template <bool with_path, class Factor>
LUMOS_HD void batch_node_update(const BatchGraphView& g, const BatchState& s, uint32_t n,
                                uint32_t v_begin, uint32_t v_end, const Factor& factor,
                                const uint32_t* operand_row, uint32_t dst_row) {
  const uint32_t b = g.pred_offset[n], e = g.pred_offset[n + 1];
  const uint64_t out = static_cast<uint64_t>(dst_row) * s.stride;
  double* fn = s.finish_us + out;
  float* cn = with_path ? s.cp_compute_us + out : nullptr;
  float* mn = with_path ? s.cp_comm_us + out : nullptr;
  const uint8_t cls = g.cls[n];
  const PathSum sum = cls == kClassCompute || cls == kClassMemory ? PathSum::kCompute
                      : cls == kClassComm                         ? PathSum::kComm
                                                                  : PathSum::kNone;
  const double base = g.base_dur_us[n];
  const auto rows = [&](uint32_t k) {  // operand k's
    const uint64_t at = static_cast<uint64_t>(operand_row[k]) * s.stride;
    OperandRows r;
    r.f = s.finish_us + at;
    if constexpr (with_path) r.c = s.cp_compute_us + at, r.m = s.cp_comm_us + at;
    r.lag_us = g.pred_lag_us[k];
    return r;
  };
  if (b == e) {
    batch_finish_pass<with_path, StartFrom::kZero>(sum, fn, cn, mn, {}, {}, base, factor, v_begin,
                                                   v_end);
  } else if (b + 1 == e) {
    batch_finish_pass<with_path, StartFrom::kOnly>(sum, fn, cn, mn, rows(b), {}, base, factor,
                                                   v_begin, v_end);
  } else if (b + 2 == e) {
    batch_finish_pass<with_path, StartFrom::kLaterOfTwo>(sum, fn, cn, mn, rows(b), rows(b + 1),
                                                         base, factor, v_begin, v_end);
  } else {
    {  // the first predecessor's start, then the maximum with all but the last
      // Two loops, not one: a plain copy of the sums vectorizes better apart (one loop measured
      // 12% slower on the generated 175B iteration).
      const OperandRows r = rows(b);
      for (uint32_t v = v_begin; v < v_end; ++v) fn[v] = r.f[v] + r.lag_us;
      if constexpr (with_path)
        for (uint32_t v = v_begin; v < v_end; ++v) cn[v] = r.c[v], mn[v] = r.m[v];
    }
    for (uint32_t k = b + 1; k + 1 < e; ++k) {
      const OperandRows r = rows(k);
      const double* __restrict__ fk = r.f;
      const float* __restrict__ ck = r.c;
      const float* __restrict__ mk = r.m;
      for (uint32_t v = v_begin; v < v_end; ++v) {
        const double t = fk[v] + r.lag_us;
        const bool later = t > fn[v];
        fn[v] = later ? t : fn[v];
        if constexpr (with_path) cn[v] = later ? ck[v] : cn[v], mn[v] = later ? mk[v] : mn[v];
      }
    }
    batch_finish_pass<with_path, StartFrom::kMergeLast>(sum, fn, cn, mn, rows(e - 1), {}, base,
                                                        factor, v_begin, v_end);
  }
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
