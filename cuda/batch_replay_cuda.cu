// Batch replay on the GPU: each thread replays a few variants (lanes) of a tile over the graph's
// packed replay program (replay/packed_program.hpp), its short-lived registers in the block's
// shared memory and the long-lived ones in a global plane; variants are independent, so no
// barrier is ever needed. The thread's body is replay/lanes_thread.hpp, started by
// cuda/launch.cuh; the host launcher runs the same body in ctest without a GPU
// (tests/host/replay/device_body_test.cpp). Run by tests/cuda/batch_replay_test.cpp and
// `lumos bench batch --backend cuda`.
//
// Three parts: DeviceProblem uploads the packed program and the slot table (slot_table.hpp,
// computed on the host) once; replay::lanes_tile_variants (host arithmetic, tested without a GPU)
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
#include "replay/lanes_thread.hpp"
#include "replay/packed_program.hpp"
#include "replay/replay_program.hpp"
#include "replay/slot_table.hpp"

namespace lumos::cuda {
namespace {

// 1. The packed program and the slot table (class factors, model slot durations and GEMM
// repricing when given, computed on the host) on the device, uploaded once per call on `stream`.
struct DeviceProblem {
  uint32_t nodes, steps, variants;
  DeviceBuffer<replay::PackedInstr> instr;
  DeviceBuffer<replay::PackedEdge> edge;
  DeviceBuffer<uint32_t> marks_offset, marks_step;
  // The slot table (slot_table.hpp).
  DeviceBuffer<uint32_t> node_slot;
  DeviceBuffer<double> row_factor, gemm_factor;
  DeviceBuffer<uint16_t> variant_gpu;
  uint32_t gpus, rows;

  DeviceProblem(const replay::PackedProgram& prog, const replay::SlotTable& slots,
                cudaStream_t stream)
      : nodes(prog.nodes),
        steps(prog.steps),
        variants(slots.variants),
        instr(to_device(prog.instr, stream)),
        edge(to_device(prog.edge, stream)),
        marks_offset(to_device(prog.marks_offset, stream)),
        marks_step(to_device(prog.marks_step, stream)),
        node_slot(to_device(slots.node_slot, stream)),
        row_factor(to_device(replay::lanes_row_factors(slots), stream)),
        gemm_factor(to_device(slots.gemm_factor, stream)),
        variant_gpu(to_device(slots.variant_gpu, stream)),
        gpus(slots.gpus),
        rows(slots.rows) {
    LUMOS_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host copies may go now
  }

  // The kernel's view: rows padded by a block's lanes (replay::lanes_row_factors).
  replay::SlotView slot_view() const {
    return {node_slot.get(),
            row_factor.get(),
            gemm_factor.get(),
            variant_gpu.get(),
            variants + replay::kLanesPerThread * replay::kLanesBlockThreads,
            gpus,
            rows};
  }
  replay::PackedView program_view() const {
    return {instr.get(), edge.get(), marks_offset.get(), marks_step.get(), nodes, steps};
  }
};

// The state and outputs of one tile on the device, laid out by `geo` (at most geo.stride
// variants), reused by every tile.
struct DeviceTile {
  replay::LanesGeometry geo;
  DeviceBuffer<double> finish_us;  // [register - shared][column], and the path planes beside it
  DeviceBuffer<float> path_compute_us, path_comm_us;
  DeviceBuffer<double> step_us, step_begin_us;  // [step][column]
  DeviceBuffer<double> makespan_us;
  DeviceBuffer<float> cp_compute_us, cp_comm_us;

  DeviceTile(const replay::LanesGeometry& geo, uint32_t steps, bool path)
      : geo(geo),
        finish_us(geo.global_regs * geo.stride),
        path_compute_us(path ? geo.global_regs * geo.stride : 0),
        path_comm_us(path ? geo.global_regs * geo.stride : 0),
        step_us(static_cast<size_t>(steps) * geo.stride),
        step_begin_us(static_cast<size_t>(steps) * geo.stride),
        makespan_us(geo.stride),
        cp_compute_us(geo.stride),
        cp_comm_us(geo.stride) {}
};

// Host copies of a tile's outputs that need converting or scattering into the result.
struct HostTile {
  std::vector<double> step_us;  // [step][column]
  std::vector<float> cp_compute_us, cp_comm_us;
  HostTile(uint32_t steps, uint64_t stride)
      : step_us(static_cast<size_t>(steps) * stride), cp_compute_us(stride), cp_comm_us(stride) {}
};

// The launcher: replays the variants [v0, v0 + count) into `t` on `stream`, a few per thread,
// with the body the host launcher runs in ctest.
template <bool Path>
void launch_batch_replay(const DeviceProblem& p, const DeviceTile& t, uint32_t v0, uint32_t count,
                         cudaStream_t stream) {
  NvtxRange range("lumos::cuda::launch_batch_replay");
  LUMOS_CUDA_REQUIRE(p.nodes > 0, "the graph has no nodes");
  LUMOS_CUDA_REQUIRE(count > 0 && count <= t.geo.stride, "a tile holds 1 to stride variants");
  LUMOS_CUDA_REQUIRE(v0 < p.variants && count <= p.variants - v0, "variants past the batch");
  const uint32_t blocks = ceil_div(count, replay::kLanesPerThread * replay::kLanesBlockThreads);
  replay::LanesThread<replay::kLanesPerThread, Path> body;
  body.program = p.program_view();
  body.slots = p.slot_view();
  body.v0 = v0;
  body.width = count;
  body.shared_regs = t.geo.shared_regs;
  body.stride = t.geo.stride;
  body.global_finish = t.finish_us.get();
  body.global_compute = t.path_compute_us.get();
  body.global_comm = t.path_comm_us.get();
  body.step_us = t.step_us.get();
  body.step_begin = t.step_begin_us.get();
  body.makespan_us = t.makespan_us.get();
  body.cp_compute_us = t.cp_compute_us.get();
  body.cp_comm_us = t.cp_comm_us.get();
  launch_blocks_device(blocks, replay::kLanesBlockThreads, t.geo.shared_bytes, body, stream);
}

// 3. One tile: launch, download, and write variants [v0, v0 + count) of the result.
template <bool Path>
void run_tile(const DeviceProblem& p, const DeviceTile& t, HostTile& h, uint32_t v0, uint32_t count,
              cudaStream_t stream, replay::BatchResult* r) {
  EventTimer kernel;
  kernel.start(stream);
  launch_batch_replay<Path>(p, t, v0, count, stream);
  kernel.stop(stream);
  t.makespan_us.download(r->makespan_us.data() + v0, count, stream);
  t.cp_compute_us.download(h.cp_compute_us.data(), count, stream);
  t.cp_comm_us.download(h.cp_comm_us.data(), count, stream);
  t.step_us.download(h.step_us.data(), h.step_us.size(), stream);
  LUMOS_CUDA_CHECK(cudaStreamSynchronize(stream));
  r->kernel_s += kernel.elapsed_s();
  for (uint32_t v = 0; v < count; ++v) {
    r->cp_compute_us[v0 + v] = h.cp_compute_us[v];
    r->cp_comm_us[v0 + v] = h.cp_comm_us[v];
  }
  for (uint32_t k = 0; k < p.steps; ++k)
    std::copy_n(h.step_us.begin() + static_cast<size_t>(k) * t.geo.stride, count,
                r->step_us[k].begin() + v0);
}

}  // namespace

replay::BatchResult batch_replay_cuda(const graph::Graph& g, const replay::VariantBatch& b,
                                      const replay::GemmPricing* pricing,
                                      uint32_t max_tile_variants, bool critical_path) {
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
  const DeviceProblem problem(replay::pack_program(program, g, slots), slots, stream.get());
  // 2. Tile width from the memory left once the problem is on the device: the registers that
  // are not in shared memory take device memory per variant.
  const uint32_t global_regs =
      replay::lanes_geometry(program.max_live, program.short_regs, 1, critical_path).global_regs;
  size_t free_bytes = 0, total_bytes = 0;
  LUMOS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  uint32_t width =
      replay::lanes_tile_variants(free_bytes, global_regs, steps, b.count, critical_path);
  if (width == 0)
    throw std::runtime_error(
        "CUDA batch replay: one block of " +
        std::to_string(replay::kLanesPerThread * replay::kLanesBlockThreads) +
        " variants of this " + std::to_string(nodes) + "-node graph needs " +
        std::to_string(replay::lanes_column_bytes(global_regs, steps, critical_path) *
                       replay::kLanesPerThread * replay::kLanesBlockThreads) +
        " bytes of device memory; " + std::to_string(free_bytes) + " are free");
  if (max_tile_variants > 0) width = std::min(width, max_tile_variants);
  const replay::LanesGeometry geo =
      replay::lanes_geometry(program.max_live, program.short_regs, width, critical_path);
  const DeviceTile tile(geo, steps, critical_path);
  HostTile host(steps, geo.stride);
  for (uint32_t v0 = 0; v0 < b.count;) {
    const uint32_t count = std::min(width, b.count - v0);
    if (critical_path)
      run_tile<true>(problem, tile, host, v0, count, stream.get(), &r);
    else
      run_tile<false>(problem, tile, host, v0, count, stream.get(), &r);
    v0 += count;
  }
  return r;
}

}  // namespace lumos::cuda
