// Batch replay on the GPU: one thread per variant walks the nodes in topological order, so a
// warp reads 32 consecutive variants of the same node (coalesced) and no barrier is ever needed
// (variants are independent). The per-node update is replay/batch_update.hpp, shared with the
// CPU backend. Run by tests/cuda/batch_replay_test.cpp and `lumos bench batch --backend cuda`.
#include <algorithm>
#include <limits>
#include <vector>

#include "batch_replay_cuda.hpp"
#include "common.cuh"
#include "cost/dtype.hpp"
#include "replay/batch_update.hpp"

namespace lumos::cuda {
namespace {

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t n) {
    LUMOS_CUDA_CHECK(cudaMalloc(&ptr, std::max<size_t>(1, n) * sizeof(T)));
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

template <typename T>
void upload(DeviceBuffer<T>& d, const std::vector<T>& h, cudaStream_t s) {
  if (!h.empty())
    LUMOS_CUDA_CHECK(
        cudaMemcpyAsync(d.ptr, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s));
}

// Walks every node for the variants of one tile; also tracks the makespan, the node that ends
// it and the end of each step.
__global__ void batch_replay_kernel(replay::BatchGraphView g, replay::BatchState s,
                                    replay::BatchGemmView gemm, bool priced, const float* speed,
                                    uint32_t speed_stride, uint32_t v0, uint32_t width,
                                    const int32_t* step_of, uint32_t steps, double* step_end,
                                    double* makespan, float* cp_compute, float* cp_comm) {
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= width) return;
  double end = -1e300;
  uint32_t arg = 0;
  for (uint32_t n = 0; n < g.nodes; ++n) {
    // The factors of this thread's variant sit at index v of the pointer passed.
    replay::batch_node_update(g, s, n, v, v + 1,
                              speed + static_cast<uint64_t>(g.cls[n]) * speed_stride + v0,
                              priced ? &gemm : nullptr, v0);
    const double f = s.finish_us[static_cast<uint64_t>(n) * s.stride + v];
    if (f > end) end = f, arg = n;
    const int32_t k = step_of[n];
    if (k >= 0) {
      double* se = step_end + static_cast<uint64_t>(k) * s.stride + v;
      *se = fmax(*se, f);
    }
  }
  makespan[v] = end;
  // The path composition of the node that ends the replay, so the host copies one row.
  cp_compute[v] = s.cp_compute_us[static_cast<uint64_t>(arg) * s.stride + v];
  cp_comm[v] = s.cp_comm_us[static_cast<uint64_t>(arg) * s.stride + v];
  (void)steps;
}

__global__ void fill_kernel(double* p, uint64_t n, double value) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = value;
}

uint32_t ceil_div(uint64_t a, uint32_t b) {
  return static_cast<uint32_t>((a + b - 1) / b);
}

}  // namespace

bool gpu_present() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

replay::BatchResult batch_replay_cuda(const graph::Graph& g, const replay::VariantBatch& b,
                                      const replay::GemmPricing* pricing) {
  NvtxRange range("lumos::cuda::batch_replay");
  b.validate();
  // Busy time per class (and the GEMM repricing of it) is computed on the host, as the CPU
  // backend does; the device walks the graph.
  const replay::BatchResult host_busy = replay::batch_replay_cpu_busy(g, b, pricing);
  replay::BatchResult r;
  r.backend = "cuda";
  r.variants = b.count;
  r.makespan_us.assign(b.count, 0.0);
  r.step_us.assign(g.steps.size(), std::vector<double>(b.count, 0.0));
  r.cp_compute_us.assign(b.count, 0.0);
  r.cp_comm_us.assign(b.count, 0.0);
  r.busy_us = host_busy.busy_us;
  r.resource_busy_us = host_busy.resource_busy_us;
  const uint32_t n = g.num_nodes();
  const uint32_t steps = static_cast<uint32_t>(g.steps.size());
  cudaStream_t stream;
  LUMOS_CUDA_CHECK(cudaStreamCreate(&stream));
  // 1. The graph, once.
  DeviceBuffer<uint32_t> d_off(g.pred_offset.size()), d_idx(g.pred_index.size());
  DeviceBuffer<double> d_lag(g.pred_lag_us.size()), d_dur(n);
  DeviceBuffer<graph::NodeClass> d_cls(n);  // one byte each, read as uint8_t
  DeviceBuffer<int32_t> d_step(n);
  upload(d_off, g.pred_offset, stream);
  upload(d_idx, g.pred_index, stream);
  upload(d_lag, g.pred_lag_us, stream);
  upload(d_dur, g.dur_us, stream);
  upload(d_cls, g.cls, stream);
  upload(d_step, g.step, stream);
  // 2. Speed factors, [class][variant].
  std::vector<float> speed(static_cast<size_t>(replay::kNumNodeClasses) * b.count);
  for (int c = 0; c < replay::kNumNodeClasses; ++c)
    std::copy(b.speed[c].begin(), b.speed[c].end(),
              speed.begin() + static_cast<size_t>(c) * b.count);
  DeviceBuffer<float> d_speed(speed.size());
  upload(d_speed, speed, stream);
  // 3. Tile the variants so that the [node][tile] state fits in free memory.
  size_t free_bytes = 0, total_bytes = 0;
  LUMOS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const size_t per_variant = static_cast<size_t>(n) * (sizeof(double) + 2 * sizeof(float)) +
                             (steps + 1) * sizeof(double) + 16;
  const uint32_t tile = static_cast<uint32_t>(
      std::max<size_t>(1, std::min<size_t>(b.count, (free_bytes * 8 / 10) / per_variant)));
  DeviceBuffer<double> d_finish(static_cast<size_t>(n) * tile),
      d_step_end(static_cast<size_t>(std::max(1u, steps)) * tile), d_makespan(tile);
  DeviceBuffer<float> d_cpc(static_cast<size_t>(n) * tile), d_cpm(static_cast<size_t>(n) * tile);
  DeviceBuffer<float> d_cp_compute(tile), d_cp_comm(tile);
  replay::BatchGraphView view{n,         d_off.ptr, d_idx.ptr,
                              d_lag.ptr, d_dur.ptr, reinterpret_cast<const uint8_t*>(d_cls.ptr)};
  // GEMM pricing tables, when given.
  const size_t keys = pricing ? pricing->keys() : 0;
  DeviceBuffer<int32_t> d_key(pricing ? n : 0);
  DeviceBuffer<int64_t> d_shape(4 * keys);
  DeviceBuffer<uint8_t> d_dtype(keys);
  DeviceBuffer<double> d_traced(keys);
  DeviceBuffer<cost::GemmCoreParams> d_params(pricing ? pricing->params.size() : 0);
  DeviceBuffer<uint16_t> d_vgpu(pricing ? b.count : 0);
  replay::BatchGemmView gemm{};
  if (pricing) {
    upload(d_key, pricing->node_key, stream);
    upload(d_shape, pricing->shape, stream);
    upload(d_dtype, pricing->dtype, stream);
    upload(d_traced, pricing->traced_us, stream);
    upload(d_params, pricing->params, stream);
    upload(d_vgpu, pricing->variant_gpu, stream);
    gemm = {d_key.ptr,
            d_shape.ptr,
            d_dtype.ptr,
            d_traced.ptr,
            d_params.ptr,
            d_vgpu.ptr,
            static_cast<uint32_t>(cost::kNumDtypes)};
  }
  replay::BatchState state{tile, d_finish.ptr, d_cpc.ptr, d_cpm.ptr};
  std::vector<double> h_step_end(static_cast<size_t>(std::max(1u, steps)) * tile), h_makespan(tile),
      h_marker(tile);
  std::vector<float> h_cp_compute(tile), h_cp_comm(tile);
  constexpr uint32_t kBlock = 128;
  for (uint32_t v0 = 0; v0 < b.count; v0 += tile) {
    const uint32_t w = std::min(tile, b.count - v0);
    const uint64_t se_n = static_cast<uint64_t>(std::max(1u, steps)) * tile;
    fill_kernel<<<ceil_div(se_n, 256), 256, 0, stream>>>(d_step_end.ptr, se_n, -1e300);
    LUMOS_CUDA_CHECK(cudaGetLastError());
    batch_replay_kernel<<<ceil_div(w, kBlock), kBlock, 0, stream>>>(
        view, state, gemm, pricing != nullptr, d_speed.ptr, b.count, v0, w, d_step.ptr, steps,
        d_step_end.ptr, d_makespan.ptr, d_cp_compute.ptr, d_cp_comm.ptr);
    LUMOS_CUDA_CHECK(cudaGetLastError());
    LUMOS_CUDA_CHECK(cudaMemcpyAsync(h_makespan.data(), d_makespan.ptr, w * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    LUMOS_CUDA_CHECK(cudaMemcpyAsync(h_cp_compute.data(), d_cp_compute.ptr, w * sizeof(float),
                                     cudaMemcpyDeviceToHost, stream));
    LUMOS_CUDA_CHECK(cudaMemcpyAsync(h_cp_comm.data(), d_cp_comm.ptr, w * sizeof(float),
                                     cudaMemcpyDeviceToHost, stream));
    LUMOS_CUDA_CHECK(cudaMemcpyAsync(h_step_end.data(), d_step_end.ptr, se_n * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    LUMOS_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (uint32_t v = 0; v < w; ++v) {
      r.makespan_us[v0 + v] = h_makespan[v];
      r.cp_compute_us[v0 + v] = h_cp_compute[v];
      r.cp_comm_us[v0 + v] = h_cp_comm[v];
    }
    for (uint32_t k = 0; k < steps; ++k) {
      LUMOS_CUDA_CHECK(cudaMemcpy(h_marker.data(),
                                  d_finish.ptr + static_cast<size_t>(g.steps[k].marker) * tile,
                                  w * sizeof(double), cudaMemcpyDeviceToHost));
      for (uint32_t v = 0; v < w; ++v) {
        const double e = h_step_end[static_cast<size_t>(k) * tile + v];
        r.step_us[k][v0 + v] = e <= -1e299 ? 0.0 : e - h_marker[v];
      }
    }
  }
  LUMOS_CUDA_CHECK(cudaStreamDestroy(stream));
  return r;
}

}  // namespace lumos::cuda
