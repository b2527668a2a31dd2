// Batch replay on the GPU: one thread per variant walks the nodes in topological order, so a
// warp reads 32 consecutive variants of the same node (coalesced) and no barrier is ever needed
// (variants are independent). The per-node update is replay/batch_update.hpp, shared with the
// CPU backend. Run by tests/cuda/batch_replay_test.cpp and `lumos bench batch --backend cuda`.
//
// Three parts: DeviceProblem uploads the graph, the speed factors and the GEMM pricing tables
// once; replay::batch_tile_variants (host arithmetic, tested without a GPU) chooses how many
// variants a tile holds; run_tile launches one tile and downloads its results.
#include <algorithm>
#include <string>
#include <vector>

#include "batch_replay_cuda.hpp"
#include "common.cuh"
#include "common/error.hpp"
#include "cost/dtype.hpp"
#include "replay/batch_update.hpp"

namespace lumos::cuda {
namespace {

// Below every finish time: the end of a step no node of which has finished yet.
constexpr double kNoFinish = -1e300;

// Walks every node for the variants [v0, v0 + width) of one tile (thread v is variant v0 + v),
// tracking the makespan, the node that ends it and the end of each step; then writes each
// step's duration (from its marker, which lasts 0) in place of its end.
__global__ void batch_replay_kernel(replay::BatchGraphView g, replay::BatchState s,
                                    replay::BatchGemmView gemm, bool priced, const float* speed,
                                    uint32_t speed_stride, uint32_t v0, uint32_t width,
                                    const int32_t* step_of, const uint32_t* step_marker,
                                    uint32_t steps, double* step_us, double* makespan,
                                    float* cp_compute, float* cp_comm) {
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= width) return;
  for (uint32_t k = 0; k < steps; ++k) step_us[static_cast<uint64_t>(k) * s.stride + v] = kNoFinish;
  double end = kNoFinish;
  uint32_t last = 0;
  for (uint32_t n = 0; n < g.nodes; ++n) {
    // The factors of this thread's variant sit at index v of the pointer passed.
    replay::batch_node_update(g, s, n, v, v + 1,
                              speed + static_cast<uint64_t>(g.cls[n]) * speed_stride + v0,
                              priced ? &gemm : nullptr, v0);
    const double f = s.finish_us[static_cast<uint64_t>(n) * s.stride + v];
    if (f > end) end = f, last = n;
    const int32_t k = step_of[n];
    if (k >= 0) {
      double* se = step_us + static_cast<uint64_t>(k) * s.stride + v;
      *se = fmax(*se, f);
    }
  }
  makespan[v] = end;
  // The path composition of the node that ends the replay, so the host copies one row.
  cp_compute[v] = s.cp_compute_us[static_cast<uint64_t>(last) * s.stride + v];
  cp_comm[v] = s.cp_comm_us[static_cast<uint64_t>(last) * s.stride + v];
  for (uint32_t k = 0; k < steps; ++k) {
    double* se = step_us + static_cast<uint64_t>(k) * s.stride + v;
    const double begin = s.finish_us[static_cast<uint64_t>(step_marker[k]) * s.stride + v];
    *se = *se <= kNoFinish ? 0.0 : *se - begin;
  }
}

std::vector<uint32_t> step_markers(const graph::Graph& g) {
  std::vector<uint32_t> out(g.steps.size());
  for (size_t k = 0; k < g.steps.size(); ++k) out[k] = g.steps[k].marker;
  return out;
}

// Speed factors as one [class][variant] array.
std::vector<float> speed_table(const replay::VariantBatch& b) {
  std::vector<float> out(static_cast<size_t>(replay::kNumNodeClasses) * b.count);
  for (int c = 0; c < replay::kNumNodeClasses; ++c)
    std::copy(b.speed[c].begin(), b.speed[c].end(), out.begin() + static_cast<size_t>(c) * b.count);
  return out;
}

// 1. The graph, the speed factors and (when given) the GEMM pricing tables on the device,
// uploaded once per call on `stream`.
struct DeviceProblem {
  uint32_t nodes, steps, variants;
  bool priced;
  DeviceBuffer<uint32_t> pred_offset, pred_index;
  DeviceBuffer<double> pred_lag_us, dur_us;
  DeviceBuffer<graph::NodeClass> cls;  // one byte each, read as uint8_t
  DeviceBuffer<int32_t> step_of;       // per node: its step, -1 outside every step
  DeviceBuffer<uint32_t> step_marker;  // per step: the node whose start is the step's start
  DeviceBuffer<float> speed;           // [class][variant]
  // GEMM pricing; empty without it.
  DeviceBuffer<int32_t> gemm_key;
  DeviceBuffer<int64_t> gemm_shape;
  DeviceBuffer<uint8_t> gemm_dtype;
  DeviceBuffer<double> gemm_traced_us;
  DeviceBuffer<cost::GemmCoreParams> gemm_params;
  DeviceBuffer<uint16_t> variant_gpu;

  DeviceProblem(const graph::Graph& g, const replay::VariantBatch& b, const replay::GemmPricing* p,
                cudaStream_t stream)
      : nodes(g.num_nodes()),
        steps(static_cast<uint32_t>(g.steps.size())),
        variants(b.count),
        priced(p != nullptr),
        pred_offset(to_device(g.pred_offset, stream)),
        pred_index(to_device(g.pred_index, stream)),
        pred_lag_us(to_device(g.pred_lag_us, stream)),
        dur_us(to_device(g.dur_us, stream)),
        cls(to_device(g.cls, stream)),
        step_of(to_device(g.step, stream)),
        step_marker(to_device(step_markers(g), stream)),
        speed(to_device(speed_table(b), stream)),
        gemm_key(p ? to_device(p->node_key, stream) : DeviceBuffer<int32_t>()),
        gemm_shape(p ? to_device(p->shape, stream) : DeviceBuffer<int64_t>()),
        gemm_dtype(p ? to_device(p->dtype, stream) : DeviceBuffer<uint8_t>()),
        gemm_traced_us(p ? to_device(p->traced_us, stream) : DeviceBuffer<double>()),
        gemm_params(p ? to_device(p->params, stream) : DeviceBuffer<cost::GemmCoreParams>()),
        variant_gpu(p ? to_device(p->variant_gpu, stream) : DeviceBuffer<uint16_t>()) {
    LUMOS_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host copies may go now
  }

  replay::BatchGraphView graph_view() const {
    return {nodes,
            pred_offset.get(),
            pred_index.get(),
            pred_lag_us.get(),
            dur_us.get(),
            reinterpret_cast<const uint8_t*>(cls.get())};
  }
  replay::BatchGemmView gemm_view() const {
    if (!priced) return {};
    return {gemm_key.get(),
            gemm_shape.get(),
            gemm_dtype.get(),
            gemm_traced_us.get(),
            gemm_params.get(),
            variant_gpu.get(),
            static_cast<uint32_t>(cost::kNumDtypes)};
  }
};

// The state and outputs of one tile on the device, `width` variants wide, reused by every tile.
struct DeviceTile {
  uint32_t width;
  DeviceBuffer<double> finish_us;  // [node][width], and the two path planes beside it
  DeviceBuffer<float> path_compute_us, path_comm_us;
  DeviceBuffer<double> step_us;  // [step][width]
  DeviceBuffer<double> makespan_us;
  DeviceBuffer<float> cp_compute_us, cp_comm_us;

  DeviceTile(uint32_t nodes, uint32_t steps, uint32_t width)
      : width(width),
        finish_us(static_cast<size_t>(nodes) * width),
        path_compute_us(static_cast<size_t>(nodes) * width),
        path_comm_us(static_cast<size_t>(nodes) * width),
        step_us(static_cast<size_t>(steps) * width),
        makespan_us(width),
        cp_compute_us(width),
        cp_comm_us(width) {}

  replay::BatchState state() const {
    return {width, finish_us.get(), path_compute_us.get(), path_comm_us.get()};
  }
};

// Host copies of a tile's outputs that need converting or scattering into the result.
struct HostTile {
  std::vector<double> step_us;  // [step][width]
  std::vector<float> cp_compute_us, cp_comm_us;
  HostTile(uint32_t steps, uint32_t width)
      : step_us(static_cast<size_t>(steps) * width), cp_compute_us(width), cp_comm_us(width) {}
};

// The launcher: replays the variants [v0, v0 + count) into `t` on `stream`, one thread each.
void launch_batch_replay(const DeviceProblem& p, const DeviceTile& t, uint32_t v0, uint32_t count,
                         cudaStream_t stream) {
  NvtxRange range("lumos::cuda::launch_batch_replay");
  LUMOS_CUDA_REQUIRE(p.nodes > 0, "the graph has no nodes");
  LUMOS_CUDA_REQUIRE(count > 0 && count <= t.width, "a tile holds 1 to width variants");
  LUMOS_CUDA_REQUIRE(v0 < p.variants && count <= p.variants - v0, "variants past the batch");
  constexpr uint32_t kBlock = 128;
  const uint32_t blocks = ceil_div(count, kBlock);
  batch_replay_kernel<<<blocks, kBlock, 0, stream>>>(
      p.graph_view(), t.state(), p.gemm_view(), p.priced, p.speed.get(), p.variants, v0, count,
      p.step_of.get(), p.step_marker.get(), p.steps, t.step_us.get(), t.makespan_us.get(),
      t.cp_compute_us.get(), t.cp_comm_us.get());
  LUMOS_CUDA_CHECK(cudaGetLastError());
}

// 3. One tile: launch, download, and write variants [v0, v0 + count) of the result.
void run_tile(const DeviceProblem& p, const DeviceTile& t, HostTile& h, uint32_t v0, uint32_t count,
              cudaStream_t stream, replay::BatchResult* r) {
  launch_batch_replay(p, t, v0, count, stream);
  t.makespan_us.download(r->makespan_us.data() + v0, count, stream);
  t.cp_compute_us.download(h.cp_compute_us.data(), count, stream);
  t.cp_comm_us.download(h.cp_comm_us.data(), count, stream);
  t.step_us.download(h.step_us.data(), h.step_us.size(), stream);
  LUMOS_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (uint32_t v = 0; v < count; ++v) {
    r->cp_compute_us[v0 + v] = h.cp_compute_us[v];
    r->cp_comm_us[v0 + v] = h.cp_comm_us[v];
  }
  for (uint32_t k = 0; k < p.steps; ++k)
    std::copy_n(h.step_us.begin() + static_cast<size_t>(k) * t.width, count,
                r->step_us[k].begin() + v0);
}

}  // namespace

replay::BatchResult batch_replay_cuda(const graph::Graph& g, const replay::VariantBatch& b,
                                      const replay::GemmPricing* pricing,
                                      uint32_t max_tile_variants) {
  NvtxRange range("lumos::cuda::batch_replay");
  // Validation of the batch and the pricing, and the busy time per class (with its GEMM
  // repricing), are the CPU backend's; the device walks the graph.
  replay::BatchResult r = replay::batch_replay_cpu_busy(g, b, pricing);
  r.backend = "cuda";
  LUMOS_EXPECT(g.num_nodes() > 0, "batch replay: the graph has no nodes");
  const uint32_t nodes = g.num_nodes(), steps = static_cast<uint32_t>(g.steps.size());
  // Declared first, so destroyed last: it outlives every buffer its work touches.
  const Stream stream;
  const DeviceProblem problem(g, b, pricing, stream.get());
  // 2. Tile width from the memory left once the problem is on the device.
  size_t free_bytes = 0, total_bytes = 0;
  LUMOS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  uint32_t width = replay::batch_tile_variants(free_bytes, nodes, steps, b.count);
  if (width == 0)
    throw std::runtime_error(
        "CUDA batch replay: one variant of this " + std::to_string(nodes) + "-node graph needs " +
        std::to_string(replay::batch_tile_bytes_per_variant(nodes, steps)) +
        " bytes of device memory; " + std::to_string(free_bytes) + " are free");
  if (max_tile_variants > 0) width = std::min(width, max_tile_variants);
  const DeviceTile tile(nodes, steps, width);
  HostTile host(steps, width);
  for (uint32_t v0 = 0; v0 < b.count;) {
    const uint32_t count = std::min(width, b.count - v0);
    run_tile(problem, tile, host, v0, count, stream.get(), &r);
    v0 += count;
  }
  return r;
}

}  // namespace lumos::cuda
