// The per-node update of the batch replay, shared by the CPU backend (host/replay/) and the CUDA
// backend (cuda/): one function, so both compute exactly the same thing. Plain C++ for a host
// compiler; __host__ __device__ when nvcc compiles it.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define LUMOS_HD __host__ __device__ __forceinline__
#else
#define LUMOS_HD inline
#endif

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

constexpr uint8_t kClassCompute = 2, kClassComm = 3, kClassMemory = 4;  // graph::NodeClass values

// Duration of node n in the variant whose speed factor for n's class is `speed`.
LUMOS_HD double batch_duration(double base_us, float speed) {
  return base_us / static_cast<double>(speed);
}

// start(n) = max over preds (finish(p) + lag); finish(n) = start + dur, for the variants
// [v_begin, v_end) of the state's rows (speed[v] is n's class factor of variant v). The path
// bookkeeping follows the first predecessor reaching the maximum. The CPU backend passes whole
// tiles (the loops over v vectorize: every access is a contiguous row), the GPU one variant per
// thread.
LUMOS_HD void batch_node_update(const BatchGraphView& g, const BatchState& s, uint32_t n,
                                uint32_t v_begin, uint32_t v_end, const float* speed) {
  const uint32_t b = g.pred_offset[n], e = g.pred_offset[n + 1];
  double* fn = s.finish_us + static_cast<uint64_t>(n) * s.stride;
  float* cn = s.cp_compute_us + static_cast<uint64_t>(n) * s.stride;
  float* mn = s.cp_comm_us + static_cast<uint64_t>(n) * s.stride;
  if (b == e) {
    for (uint32_t v = v_begin; v < v_end; ++v) fn[v] = 0.0, cn[v] = 0.0f, mn[v] = 0.0f;
  } else {
    {
      const uint64_t row = static_cast<uint64_t>(g.pred_index[b]) * s.stride;
      const double lag = g.pred_lag_us[b];
      const double* fp = s.finish_us + row;
      const float* cp = s.cp_compute_us + row;
      const float* mp = s.cp_comm_us + row;
      for (uint32_t v = v_begin; v < v_end; ++v) fn[v] = fp[v] + lag, cn[v] = cp[v], mn[v] = mp[v];
    }
    for (uint32_t k = b + 1; k < e; ++k) {
      const uint64_t row = static_cast<uint64_t>(g.pred_index[k]) * s.stride;
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
      const double dur = batch_duration(base, speed[v]);
      fn[v] += dur, cn[v] += static_cast<float>(dur);
    }
  } else if (c == kClassComm) {
    for (uint32_t v = v_begin; v < v_end; ++v) {
      const double dur = batch_duration(base, speed[v]);
      fn[v] += dur, mn[v] += static_cast<float>(dur);
    }
  } else {
    for (uint32_t v = v_begin; v < v_end; ++v) fn[v] += batch_duration(base, speed[v]);
  }
}

}  // namespace lumos::replay
