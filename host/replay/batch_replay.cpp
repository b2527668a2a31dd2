#include "replay/batch_replay.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include "common/error.hpp"
#include "common/launch.hpp"
#include "common/thread_pool.hpp"
#include "cost/dtype.hpp"
#include "replay/batch_update.hpp"
#include "replay/critical_path.hpp"
#include "replay/lanes_thread.hpp"
#include "replay/packed_program.hpp"
#include "replay/reference_replay.hpp"
#include "replay/replay_program.hpp"
#include "replay/slot_table.hpp"

// GCC and Clang on x86-64 build the tile loop once per instruction set and pick one at load time.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__NVCC__)
#define LUMOS_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LUMOS_CPU_CLONES
#endif

namespace lumos::replay {

namespace {

// The graph as the shared update reads it, with the durations the slot factors multiply;
// NodeClass is a one-byte enum, so its array serves as is.
BatchGraphView graph_view(const graph::Graph& g, const SlotTable& slots) {
  static_assert(sizeof(graph::NodeClass) == sizeof(uint8_t));
  return {g.num_nodes(),        g.pred_offset.data(),
          g.pred_index.data(),  g.pred_lag_us.data(),
          slots.base_us.data(), reinterpret_cast<const uint8_t*>(g.cls.data())};
}

// Busy time needs no replay: per class and per resource (thread or stream), the sum of the
// nodes' durations, gathered per slot first (the factors are per slot); left at zero when the
// batch does not ask for it (VariantBatch::busy).
void init_result(const graph::Graph& g, const VariantBatch& b, const SlotTable& slots,
                 const char* backend, BatchResult* r) {
  r->backend = backend;
  r->variants = b.count;
  r->makespan_us.assign(b.count, 0.0);
  r->step_us.assign(g.steps.size(), std::vector<double>(b.count, 0.0));
  r->cp_compute_us.assign(b.count, 0.0);
  r->cp_comm_us.assign(b.count, 0.0);
  const size_t resources = g.resources.size();
  for (auto& v : r->busy_us) v.assign(b.count, 0.0);
  r->resource_busy_us.assign(resources, std::vector<double>(b.count, 0.0));
  if (!b.busy) return;
  // [slot][class] and [slot][resource] totals of the nodes' base durations.
  std::vector<double> by_class(static_cast<size_t>(slots.slots) * kNumNodeClasses, 0.0);
  std::vector<double> by_res(static_cast<size_t>(slots.slots) * resources, 0.0);
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) {
    const size_t slot = slots.node_slot[n];
    by_class[slot * kNumNodeClasses + static_cast<size_t>(g.cls[n])] += slots.base_us[n];
    if (g.resource[n] != graph::kNoResource)
      by_res[slot * resources + g.resource[n]] += slots.base_us[n];
  }
  const SlotView view = slots.view();
  for (uint32_t slot = 0; slot < slots.slots; ++slot) {
    for (int c = 0; c < kNumNodeClasses; ++c) {
      const double total = by_class[static_cast<size_t>(slot) * kNumNodeClasses + c];
      if (total > 0)
        for (uint32_t v = 0; v < b.count; ++v) r->busy_us[c][v] += total * view.factor(slot, v);
    }
    for (size_t res = 0; res < resources; ++res) {
      const double total = by_res[slot * resources + res];
      if (total > 0)
        for (uint32_t v = 0; v < b.count; ++v)
          r->resource_busy_us[res][v] += total * view.factor(slot, v);
    }
  }
}

void check_pricing(const graph::Graph& g, const VariantBatch& b, const GemmPricing* pricing) {
  if (pricing) pricing->validate(g.num_nodes(), b.count);
}

// Slot factors of a tile's variants, as batch_node_update reads them.
struct RowFactor {
  const double* row;
  double operator()(uint32_t v) const { return row[v]; }
};
struct GemmFactor {
  const double* by_gpu;    // the shape's factor per GPU
  const uint16_t* gpu_of;  // per variant of the tile
  double operator()(uint32_t v) const { return by_gpu[gpu_of[v]]; }
};

// A worker's buffers for one tile: the register planes, and the tile's ends (makespan, its path's
// composition, each step's end and start).
struct TileBuffers {
  BatchState state;
  double* end;
  float* end_compute;
  float* end_comm;
  double* step_end;    // [step][tile]
  double* step_begin;  // [step][tile]
};

constexpr double kNoEnd = -std::numeric_limits<double>::infinity();

// Runs the program over the w variants of one tile starting at absolute variant v0. The hot loop
// of the CPU backend: compiled once per instruction set the build's target has (AVX-512, AVX2 and
// the baseline), the best one chosen when the program loads, with everything it calls inlined so
// the per-variant loops vectorize at that width. No fused multiply-add is enabled, so every clone
// computes the same bits as the reference.
LUMOS_CPU_CLONES [[gnu::flatten]] void replay_tile(const BatchGraphView& view,
                                                   const int32_t* step_of,
                                                   const ReplayProgram& prog,
                                                   const SlotTable& slots, uint32_t count,
                                                   uint32_t v0, uint32_t w, size_t steps,
                                                   const TileBuffers& tb, bool path) {
  const BatchState& s = tb.state;
  const uint32_t tile = s.stride;
  for (uint32_t v = 0; v < tile; ++v) tb.end[v] = kNoEnd, tb.end_compute[v] = tb.end_comm[v] = 0;
  for (size_t i = 0; i < steps * tile; ++i) tb.step_end[i] = kNoEnd;
  for (const uint32_t node : prog.order) {
    const uint32_t reg = prog.dst[node];
    const uint32_t slot = slots.node_slot[node];
    if (slot < slots.rows) {  // a contiguous row: a class's factors or a model slot's durations
      const RowFactor factor{slots.row_factor.data() + static_cast<size_t>(slot) * count + v0};
      if (path)
        batch_node_update<true>(view, s, node, 0, w, factor, prog.op_reg.data(), reg);
      else
        batch_node_update<false>(view, s, node, 0, w, factor, prog.op_reg.data(), reg);
    } else {  // a GEMM shape: its factor on each variant's GPU
      const GemmFactor factor{
          slots.gemm_factor.data() + static_cast<size_t>(slot - slots.rows) * slots.gpus,
          slots.variant_gpu.data() + v0};
      if (path)
        batch_node_update<true>(view, s, node, 0, w, factor, prog.op_reg.data(), reg);
      else
        batch_node_update<false>(view, s, node, 0, w, factor, prog.op_reg.data(), reg);
    }
    const size_t row = static_cast<size_t>(reg) * tile;
    const double* f = s.finish_us + row;
    if (prog.may_end[node]) {
      if (path) {
        const float* c = s.cp_compute_us + row;
        const float* m = s.cp_comm_us + row;
        for (uint32_t v = 0; v < w; ++v)
          if (f[v] > tb.end[v]) tb.end[v] = f[v], tb.end_compute[v] = c[v], tb.end_comm[v] = m[v];
      } else {
        for (uint32_t v = 0; v < w; ++v) tb.end[v] = f[v] > tb.end[v] ? f[v] : tb.end[v];
      }
    }
    if (step_of[node] >= 0 && prog.may_end_step[node]) {  // per-step end times
      double* se = tb.step_end + static_cast<size_t>(step_of[node]) * tile;
      for (uint32_t v = 0; v < w; ++v) se[v] = se[v] > f[v] ? se[v] : f[v];
    }
    for (uint32_t k = prog.marks_offset[node]; k < prog.marks_offset[node + 1]; ++k)
      batch_node_start(view, s, node, 0, w, prog.op_reg.data(),
                       tb.step_begin + static_cast<size_t>(prog.marks_step[k]) * tile);
  }
}

}  // namespace

uint32_t batch_cpu_tile(uint32_t hot_registers, uint32_t steps, uint32_t variants, unsigned threads,
                        bool path) {
  // Wide enough that the per-instruction work (operand rows, lags, the slot) is spread over many
  // variants; small enough that the working set (the hot registers, 16 bytes per register and
  // variant, 8 without the path, and 16 per step for its end and start) stays in a core's L2
  // (1 MiB or more on current server cores); and leaving every thread a tile. Sized to max_live
  // instead, the generated GPT-3 175B iteration (then 565 registers, 25 hot) took tiles of 128 and
  // ran at 2.3e9 node-variants/s, against 4.3e9 at 512 (the history of docs/benchmarks.md,
  // "Tiles sized to the working set"); wider than 512 gained nothing on the full replay.
  constexpr uint64_t kHotBytes = 1024 * 1024;
  constexpr uint32_t kMaxTile = 512, kMinTile = 8;
  const uint64_t per_variant = (path ? 16 : 8) * static_cast<uint64_t>(hot_registers) + 16 * steps;
  uint32_t tile = kMaxTile;
  while (tile > kMinTile && per_variant * tile > kHotBytes) tile /= 2;
  while (tile > kMinTile && (static_cast<uint64_t>(variants) + tile - 1) / tile < threads)
    tile /= 2;
  return tile;
}

uint32_t batch_cpu_tile(const ReplayProgram& p, const graph::Graph& g, uint32_t variants,
                        unsigned threads, bool path) {
  // The tile only shrinks as the working set grows, and the working set is at most max_live: when
  // max_live already allows the widest tile the variants do (a tile is never wider than the
  // batch), the working set is not measured. Nor is it for tiles under 64 variants: measuring it
  // costs about what the replay it would speed up does (a sweep's thousands of graphs of a few
  // variants each: 3.7 thread-s of replay with it, 1.6 without).
  constexpr uint32_t kMeasuredTile = 64;
  const auto steps = static_cast<uint32_t>(g.steps.size());
  const uint32_t widest = std::min(batch_cpu_tile(0, steps, variants, threads, path), variants);
  const uint32_t by_max_live =
      std::min(batch_cpu_tile(p.max_live, steps, variants, threads, path), variants);
  if (by_max_live == widest || widest < kMeasuredTile) return by_max_live;
  return std::min(batch_cpu_tile(hot_registers(p, g), steps, variants, threads, path), variants);
}

BatchResult batch_replay_cpu(const graph::Graph& g, const VariantBatch& b, uint32_t tile,
                             unsigned threads, const GemmPricing* pricing,
                             const ReplayProgram* program, bool critical_path,
                             const ProgressFn& progress) {
  const SlotTable slots = slot_table(g, b, pricing);  // which validates the batch and pricing
  BatchResult r;
  init_result(g, b, slots, "cpu", &r);
  const BatchGraphView view = graph_view(g, slots);

  // The graph as a program over live-state registers: the state is max_live x tile.
  ReplayProgram own;
  if (!program) own = compile_program(g);
  const ReplayProgram& prog = program ? *program : own;
  LUMOS_EXPECT(prog.nodes == g.num_nodes() && prog.order.size() == g.num_nodes() &&
                   prog.op_reg.size() == g.num_edges() && prog.marks_step.size() == g.steps.size(),
               "batch replay: the program was compiled from another graph");
  r.max_live = prog.max_live;
  if (threads == 0) threads = worker_threads(0);
  if (tile == 0) tile = batch_cpu_tile(prog, g, b.count, threads, critical_path);
  tile = std::min(tile, b.count);  // no wider than the batch
  const uint32_t tiles = static_cast<uint32_t>((static_cast<uint64_t>(b.count) + tile - 1) / tile);
  threads = std::min<unsigned>(threads, tiles);
  const size_t steps = g.steps.size();
  std::atomic<uint32_t> next{0};
  std::mutex progress_mutex;
  uint64_t replayed = 0;
  auto worker = [&]() {
    // One state buffer per thread: three [register][tile] planes in a single allocation (the
    // finish plane alone without the critical path).
    const size_t plane = static_cast<size_t>(prog.max_live) * tile;
    std::unique_ptr<char[]> buf(
        new char[plane * (sizeof(double) + (critical_path ? 2 * sizeof(float) : 0))]);
    TileBuffers tb;
    tb.state = {
        tile, reinterpret_cast<double*>(buf.get()),
        critical_path ? reinterpret_cast<float*>(buf.get() + plane * sizeof(double)) : nullptr,
        critical_path
            ? reinterpret_cast<float*>(buf.get() + plane * (sizeof(double) + sizeof(float)))
            : nullptr};
    std::vector<double> end(tile), step_end(steps * tile), step_begin(steps * tile);
    std::vector<float> end_compute(tile), end_comm(tile);
    tb.end = end.data(), tb.step_end = step_end.data(), tb.step_begin = step_begin.data();
    tb.end_compute = end_compute.data(), tb.end_comm = end_comm.data();
    for (uint32_t t; (t = next.fetch_add(1)) < tiles;) {
      const uint32_t v0 = t * tile, w = std::min(tile, b.count - v0);
      replay_tile(view, g.step.data(), prog, slots, b.count, v0, w, steps, tb, critical_path);
      for (uint32_t v = 0; v < w; ++v) {
        r.makespan_us[v0 + v] = end[v];
        r.cp_compute_us[v0 + v] = end_compute[v];
        r.cp_comm_us[v0 + v] = end_comm[v];
        for (size_t k = 0; k < steps; ++k) {
          const double e = step_end[k * tile + v];
          r.step_us[k][v0 + v] =
              e == kNoEnd ? 0.0 : e - step_begin[k * tile + v];  // markers last 0
        }
      }
      if (progress) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        progress(replayed += w, b.count);
      }
    }
  };
  run_workers(threads, worker);
  return r;
}

namespace {

// The device kernel's body over the batch in tiles of `max_tile` variants (0: one tile), started by
// the host launcher.
template <bool Path>
void run_lanes_on_host(const graph::Graph& g, const VariantBatch& b, const GemmPricing* pricing,
                       uint32_t max_shared_regs, uint32_t max_tile, BatchResult* r) {
  const ReplayProgram prog = compile_program(g);
  r->max_live = prog.max_live;
  const SlotTable slots = slot_table(g, b, pricing);
  const PackedProgram packed = pack_program(prog, g, slots);
  // Tiles as the CUDA backend runs them (cuda/batch_replay_cuda.cu): one geometry for the widest,
  // the last one partial.
  const uint32_t width = max_tile > 0 ? std::min(max_tile, b.count) : b.count;
  const LanesGeometry geo =
      lanes_geometry(prog.max_live, std::min(prog.short_regs, max_shared_regs), width, Path);
  // A GPU's memory starts undefined: NaN here, so that a read of a word no thread wrote shows.
  constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
  const uint64_t plane = geo.global_regs * geo.stride, steps = g.steps.size();
  std::vector<double> finish(plane, kUnset), step_us(steps * geo.stride, kUnset),
      step_begin(steps * geo.stride, kUnset), makespan(geo.stride, kUnset);
  std::vector<float> path_compute(Path ? plane : 0, kUnset), path_comm(Path ? plane : 0, kUnset),
      cp_compute(geo.stride, kUnset), cp_comm(geo.stride, kUnset);
  LanesThread<kLanesPerThread, Path> body;
  body.program = {packed.instr.data(),      packed.edge.data(), packed.marks_offset.data(),
                  packed.marks_step.data(), packed.nodes,       packed.steps};
  const std::vector<double> rows = lanes_row_factors(slots);
  body.slots = lanes_slot_view(slots, rows.data());
  body.shared_regs = geo.shared_regs;
  body.stride = geo.stride;
  body.global_finish = finish.data();
  body.global_compute = path_compute.data();
  body.global_comm = path_comm.data();
  body.step_us = step_us.data();
  body.step_begin = step_begin.data();
  body.makespan_us = makespan.data();
  body.cp_compute_us = cp_compute.data();
  body.cp_comm_us = cp_comm.data();
  for (uint32_t v0 = 0; v0 < b.count; v0 += width) {
    const uint32_t count = std::min(width, b.count - v0);
    body.v0 = v0;
    body.width = count;
    launch_blocks(lanes_geometry(0, 0, count, Path).blocks, kLanesBlockThreads, geo.shared_bytes,
                  body);
    for (uint32_t v = 0; v < count; ++v) {
      r->makespan_us[v0 + v] = makespan[v];
      r->cp_compute_us[v0 + v] = cp_compute[v];
      r->cp_comm_us[v0 + v] = cp_comm[v];
      for (uint64_t k = 0; k < steps; ++k) r->step_us[k][v0 + v] = step_us[k * geo.stride + v];
    }
  }
}

}  // namespace

BatchResult batch_replay_device_body(const graph::Graph& g, const VariantBatch& b,
                                     const GemmPricing* pricing, bool critical_path,
                                     uint32_t max_shared_regs, uint32_t max_tile_variants) {
  BatchResult r = batch_replay_cpu_busy(g, b, pricing);
  r.backend = "device body on the cpu";
  if (critical_path)
    run_lanes_on_host<true>(g, b, pricing, max_shared_regs, max_tile_variants, &r);
  else
    run_lanes_on_host<false>(g, b, pricing, max_shared_regs, max_tile_variants, &r);
  return r;
}

BatchResult batch_replay_cpu_busy(const graph::Graph& g, const VariantBatch& b,
                                  const GemmPricing* pricing) {
  b.validate(g.num_nodes());
  check_pricing(g, b, pricing);
  BatchResult r;
  init_result(g, b, slot_table(g, b, pricing), "cpu", &r);
  return r;
}

BatchResult batch_replay_reference(const graph::Graph& g, const VariantBatch& b,
                                   const GemmPricing* pricing) {
  b.validate(g.num_nodes());
  check_pricing(g, b, pricing);
  BatchResult r;
  init_result(g, b, slot_table(g, b, pricing), "reference", &r);
  // Durations straight from the batch and the cost model, not from the slot table, so that the
  // table is checked against them.
  const BatchGemmView gemm_view = pricing ? pricing->view() : BatchGemmView{};
  const BatchGraphView gv{g.num_nodes(),       g.pred_offset.data(),
                          g.pred_index.data(), g.pred_lag_us.data(),
                          g.dur_us.data(),     reinterpret_cast<const uint8_t*>(g.cls.data())};
  const bool model = !b.node_slot.empty();
  const graph::Successors succ = graph::successors_of(g);
  std::vector<double> dur(g.num_nodes());
  for (uint32_t v = 0; v < b.count; ++v) {
    for (graph::NodeId n = 0; n < g.num_nodes(); ++n)
      dur[n] = model && b.node_slot[n] != VariantBatch::kNoSlot
                   ? b.slot_us[static_cast<size_t>(b.node_slot[n]) * b.count + v]
                   : batch_node_duration(gv, pricing ? &gemm_view : nullptr, n, v, 0,
                                         b.speed[gv.cls[n]].data());
    const ReplayResult rr = reference_replay(g, succ, &dur);
    r.makespan_us[v] = rr.makespan_us;
    std::vector<double> end(g.steps.size(), -std::numeric_limits<double>::infinity());
    for (graph::NodeId n = 1; n < g.num_nodes(); ++n)
      if (g.step[n] >= 0) end[g.step[n]] = std::max(end[g.step[n]], rr.finish_us[n]);
    for (size_t k = 0; k < g.steps.size(); ++k)
      r.step_us[k][v] = end[k] == -std::numeric_limits<double>::infinity()
                            ? 0.0
                            : end[k] - rr.start_us[g.steps[k].marker];
    const CriticalPath cp = critical_path(g, rr, -1, CriticalPathMode::kTiming);
    r.cp_compute_us[v] = cp.by_class_us[static_cast<int>(graph::NodeClass::kCompute)] +
                         cp.by_class_us[static_cast<int>(graph::NodeClass::kMemory)];
    r.cp_comm_us[v] = cp.by_class_us[static_cast<int>(graph::NodeClass::kComm)];
  }
  return r;
}

}  // namespace lumos::replay
