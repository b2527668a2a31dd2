// Batch replay on the GPU: one thread per variant runs the graph's replay program
// (replay/replay_program.hpp) over its own registers, so a warp reads 32 consecutive variants of
// the same register (coalesced) and no barrier is ever needed (variants are independent). The
// thread's body is replay/program_thread.hpp, started by cuda/launch.cuh; the host launcher runs
// the same body in ctest without a GPU (tests/host/replay/device_body_test.cpp). Run by
// tests/cuda/batch_replay_test.cpp and `lumos bench batch --backend cuda`.
//
// Three parts: DeviceProblem uploads the graph, its program and the slot table (slot_table.hpp,
// computed on the host) once; replay::batch_tile_variants (host arithmetic, tested without a GPU)
// chooses how many variants a tile holds; run_tile launches one tile and downloads its results.
#include <algorithm>
#include <string>
#include <vector>

#include "batch_replay_cuda.hpp"
#include "common.cuh"
#include "common/error.hpp"
#include "cost/dtype.hpp"
#include "launch.cuh"
#include "replay/batch_replay.hpp"
#include "replay/batch_update.hpp"
#include "replay/program_thread.hpp"
#include "replay/replay_program.hpp"
#include "replay/slot_table.hpp"

namespace lumos::cuda {
namespace {

// 1. The graph, its program and the slot table (class factors, model slot durations and GEMM
// repricing when given, computed on the host) on the device, uploaded once per call on `stream`.
struct DeviceProblem {
  uint32_t nodes, steps, variants, max_live;
  DeviceBuffer<uint32_t> pred_offset, pred_index;
  DeviceBuffer<double> pred_lag_us, dur_us;
  DeviceBuffer<graph::NodeClass> cls;  // one byte each, read as uint8_t
  DeviceBuffer<int32_t> step_of;       // per node: its step, -1 outside every step
  // The program.
  DeviceBuffer<uint32_t> order, dst, op_reg, marks_offset, marks_step;
  DeviceBuffer<uint8_t> may_end, may_end_step;
  // The slot table (slot_table.hpp).
  DeviceBuffer<uint32_t> node_slot;
  DeviceBuffer<double> row_factor, gemm_factor;
  DeviceBuffer<uint16_t> variant_gpu;
  uint32_t gpus, rows;

  DeviceProblem(const graph::Graph& g, const replay::ReplayProgram& prog,
                const replay::SlotTable& slots, cudaStream_t stream)
      : nodes(g.num_nodes()),
        steps(static_cast<uint32_t>(g.steps.size())),
        variants(slots.variants),
        max_live(prog.max_live),
        pred_offset(to_device(g.pred_offset, stream)),
        pred_index(to_device(g.pred_index, stream)),
        pred_lag_us(to_device(g.pred_lag_us, stream)),
        dur_us(to_device(slots.base_us, stream)),  // the durations the factors multiply
        cls(to_device(g.cls, stream)),
        step_of(to_device(g.step, stream)),
        order(to_device(prog.order, stream)),
        dst(to_device(prog.dst, stream)),
        op_reg(to_device(prog.op_reg, stream)),
        marks_offset(to_device(prog.marks_offset, stream)),
        marks_step(to_device(prog.marks_step, stream)),
        may_end(to_device(prog.may_end, stream)),
        may_end_step(to_device(prog.may_end_step, stream)),
        node_slot(to_device(slots.node_slot, stream)),
        row_factor(to_device(slots.row_factor, stream)),
        gemm_factor(to_device(slots.gemm_factor, stream)),
        variant_gpu(to_device(slots.variant_gpu, stream)),
        gpus(slots.gpus),
        rows(slots.rows) {
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
  replay::SlotView slot_view() const {
    return {node_slot.get(),
            row_factor.get(),
            gemm_factor.get(),
            variant_gpu.get(),
            variants,
            gpus,
            rows};
  }
  replay::ProgramView program_view() const {
    replay::ProgramView v;
    v.nodes = nodes;
    v.order = order.get();
    v.dst = dst.get();
    v.op_reg = op_reg.get();
    v.may_end = may_end.get();
    v.may_end_step = may_end_step.get();
    v.marks_offset = marks_offset.get();
    v.marks_step = marks_step.get();
    v.step_of = step_of.get();
    v.steps = steps;
    return v;
  }
};

// The state and outputs of one tile on the device, `width` variants wide, reused by every tile.
struct DeviceTile {
  uint32_t width;
  DeviceBuffer<double> finish_us;  // [register][width], and the two path planes beside it
  DeviceBuffer<float> path_compute_us, path_comm_us;
  DeviceBuffer<double> step_us, step_begin_us;  // [step][width]
  DeviceBuffer<double> makespan_us;
  DeviceBuffer<float> cp_compute_us, cp_comm_us;

  DeviceTile(uint32_t rows, uint32_t steps, uint32_t width)
      : width(width),
        finish_us(static_cast<size_t>(rows) * width),
        path_compute_us(static_cast<size_t>(rows) * width),
        path_comm_us(static_cast<size_t>(rows) * width),
        step_us(static_cast<size_t>(steps) * width),
        step_begin_us(static_cast<size_t>(steps) * width),
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

// The launcher: replays the variants [v0, v0 + count) into `t` on `stream`, one thread each,
// with the body the host launcher runs in ctest.
void launch_batch_replay(const DeviceProblem& p, const DeviceTile& t, uint32_t v0, uint32_t count,
                         cudaStream_t stream) {
  NvtxRange range("lumos::cuda::launch_batch_replay");
  LUMOS_CUDA_REQUIRE(p.nodes > 0, "the graph has no nodes");
  LUMOS_CUDA_REQUIRE(count > 0 && count <= t.width, "a tile holds 1 to width variants");
  LUMOS_CUDA_REQUIRE(v0 < p.variants && count <= p.variants - v0, "variants past the batch");
  replay::ProgramThread body;
  body.graph = p.graph_view();
  body.program = p.program_view();
  body.slots = p.slot_view();
  body.v0 = v0;
  body.state = t.state();
  body.step_us = t.step_us.get();
  body.step_begin = t.step_begin_us.get();
  body.makespan_us = t.makespan_us.get();
  body.cp_compute_us = t.cp_compute_us.get();
  body.cp_comm_us = t.cp_comm_us.get();
  launch_threads_device(count, body, stream);
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
  const replay::ReplayProgram program = replay::compile_program(g);
  r.max_live = program.max_live;
  const replay::SlotTable slots = replay::slot_table(g, b, pricing);
  const DeviceProblem problem(g, program, slots, stream.get());
  // 2. Tile width from the memory left once the problem is on the device.
  size_t free_bytes = 0, total_bytes = 0;
  LUMOS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const uint32_t rows = std::max(1u, program.max_live);
  uint32_t width = replay::batch_tile_variants(free_bytes, rows, steps, b.count);
  if (width == 0)
    throw std::runtime_error(
        "CUDA batch replay: one variant of this " + std::to_string(nodes) + "-node graph needs " +
        std::to_string(replay::batch_tile_bytes_per_variant(rows, steps)) +
        " bytes of device memory; " + std::to_string(free_bytes) + " are free");
  if (max_tile_variants > 0) width = std::min(width, max_tile_variants);
  const DeviceTile tile(rows, steps, width);
  HostTile host(steps, width);
  for (uint32_t v0 = 0; v0 < b.count;) {
    const uint32_t count = std::min(width, b.count - v0);
    run_tile(problem, tile, host, v0, count, stream.get(), &r);
    v0 += count;
  }
  return r;
}

}  // namespace lumos::cuda
