// The CUDA backend's kernel body: one thread replays W variants (lanes) of a tile over a packed
// program (packed_program.hpp). `__host__ __device__` under nvcc and plain C++ otherwise, so the
// host launcher (common/launch.hpp, launch_blocks) runs the very same code in ctest on machines
// without a GPU.
//
// Why it is shaped so (docs/design.md "Replay engines"; the projection in
// engine/device_projection):
// - W lanes per thread share each instruction's decoding (its record, its operands' records,
//   the register addresses), which is most of a node's instructions with one lane.
// - Registers [0, shared_regs) live in the block's shared memory ([register][lane][thread]: a
//   warp's 32 threads read 32 consecutive words), the rest in a global plane
//   ([register - shared_regs][column], coalesced). The program gives the low registers to values
//   read soon after they are computed (ReplayProgram::short_regs), so nearly every operand is
//   read from shared memory and the long-lived values (a pipeline's parameter all-gathers) wait
//   in global memory without taking shared memory from other threads.
// - Variants are independent: no barrier, no atomics; thread t of block b owns the tile's
//   columns (b * W + w) * T + t.
// Path = false keeps finish times alone (sweeps need no critical path): half the state.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/hd.hpp"
#include "replay/packed_program.hpp"
#include "replay/slot_table.hpp"

namespace lumos::replay {

// A packed program as raw arrays.
struct PackedView {
  const PackedInstr* instr = nullptr;
  const PackedEdge* edge = nullptr;
  const uint32_t* marks_offset = nullptr;  // [instruction + 1]
  const uint32_t* marks_step = nullptr;
  uint32_t nodes = 0, steps = 0;
};

// Below every finish time: the end of a step none of whose nodes has finished yet.
constexpr double kNoFinish = -1e300;

// Threads per block and lanes per thread of the device kernel.
constexpr uint32_t kLanesBlockThreads = 64, kLanesPerThread = 4;
// The shared memory one block takes at most: 48 KiB, what a block gets without opting in (CUDA
// C++ programming guide), so that an SM (228 KB on sm_90) holds four blocks, 8 warps, two per
// scheduler to hide a shared load's latency behind another warp's lanes. A program's further
// short-lived registers go to the global plane (and mostly the L2).
constexpr uint64_t kMaxSharedBytesPerBlock = 48 * 1024;

// Shared-memory bytes per register of one lane: its finish, and with the path its two sums.
constexpr uint64_t lanes_register_bytes(bool path) {
  return path ? 16 : 8;
}

// Registers kept in shared memory: the short-lived ones, as many as one block can hold.
constexpr uint32_t lanes_shared_regs(uint32_t short_regs, bool path) {
  const uint64_t fit =
      kMaxSharedBytesPerBlock / (lanes_register_bytes(path) * kLanesPerThread * kLanesBlockThreads);
  return short_regs < fit ? short_regs : static_cast<uint32_t>(fit);
}

constexpr uint64_t lanes_shared_bytes(uint32_t shared_regs, bool path) {
  return lanes_register_bytes(path) * shared_regs * kLanesPerThread * kLanesBlockThreads;
}

// How a tile of `width` variants is laid out for the kernel.
struct LanesGeometry {
  uint32_t shared_regs = 0, global_regs = 0;  // global_regs: at least 1 (a plane is allocated)
  uint32_t blocks = 0;
  uint64_t stride = 0;  // columns: blocks x lanes x threads, at least width
  uint64_t shared_bytes = 0;
};

constexpr LanesGeometry lanes_geometry(uint32_t max_live, uint32_t short_regs, uint32_t width,
                                       bool path) {
  LanesGeometry g;
  g.shared_regs = lanes_shared_regs(short_regs, path);
  g.global_regs = max_live > g.shared_regs ? max_live - g.shared_regs : 1;
  constexpr uint64_t per_block = kLanesPerThread * kLanesBlockThreads;
  g.blocks = static_cast<uint32_t>((static_cast<uint64_t>(width) + per_block - 1) / per_block);
  g.stride = g.blocks * per_block;
  g.shared_bytes = lanes_shared_bytes(g.shared_regs, path);
  return g;
}

// Device bytes one column of a tile takes: its global registers (8 bytes each, 16 with the
// path), its step's end and start (16 per step, at least one row) and its outputs (the makespan
// and the path's two sums).
constexpr uint64_t lanes_column_bytes(uint32_t global_regs, uint32_t steps, bool path) {
  return static_cast<uint64_t>(global_regs) * lanes_register_bytes(path) +
         static_cast<uint64_t>(steps > 0 ? steps : 1) * 2 * sizeof(double) + sizeof(double) +
         2 * sizeof(float);
}

// Variants per tile, given the device memory still free once the program and the tables are
// uploaded: a tile is whole blocks of columns (the kernel's stride), and they fit in 80% of it
// (the rest is headroom for the runtime and the allocator's rounding). The whole batch when its
// blocks fit; otherwise whole blocks, below the batch; 0 when not one block fits.
constexpr uint32_t lanes_tile_variants(uint64_t free_bytes, uint32_t global_regs, uint32_t steps,
                                       uint32_t variants, bool path) {
  constexpr uint64_t per_block = kLanesPerThread * kLanesBlockThreads;
  const uint64_t blocks_fit =
      free_bytes / 10 * 8 / (lanes_column_bytes(global_regs, steps, path) * per_block);
  const uint64_t blocks_needed = (static_cast<uint64_t>(variants) + per_block - 1) / per_block;
  if (blocks_fit >= blocks_needed) return variants;
  return static_cast<uint32_t>(blocks_fit * per_block);  // below `variants`, so it fits
}

template <uint32_t W, bool Path>
struct LanesThread {
  static constexpr uint32_t T = kLanesBlockThreads;  // threads per block
  PackedView program;
  SlotView slots;
  uint32_t v0 = 0;     // absolute index of the tile's first variant
  uint32_t width = 0;  // variants in the tile
  uint32_t shared_regs = 0;
  uint64_t stride = 0;              // columns of every [.][column] plane: blocks x W x T
  double* global_finish = nullptr;  // [register - shared_regs][column]
  float* global_compute = nullptr;  // the same, with the path
  float* global_comm = nullptr;
  double* step_us = nullptr;      // [step][column]: the step's end, then its duration
  double* step_begin = nullptr;   // [step][column]
  double* makespan_us = nullptr;  // [column]
  float* cp_compute_us = nullptr;
  float* cp_comm_us = nullptr;

  // Where register `reg` of the thread's first lane is, in the three planes (finish, then the
  // path's two sums): in the block's shared memory ([register][lane][thread]; `mine` is the
  // thread's first word there) or in the global planes ([register - shared_regs][column]). Lane w
  // is T values further on in either (its column is the first lane's + w x T), so one address
  // serves every lane, at offsets the compiler knows.
  struct Slot {
    double* f;
    float* c;
    float* m;
  };
  LUMOS_HD Slot slot(uint32_t reg, double* mine, float* mine_sums, uint64_t col0) const {
    if (reg < shared_regs) {
      const uint64_t at = static_cast<uint64_t>(reg) * W * T;
      if constexpr (Path) {
        const uint64_t plane = static_cast<uint64_t>(shared_regs) * W * T;
        return {mine + at, mine_sums + at, mine_sums + plane + at};
      }
      return {mine + at, nullptr, nullptr};
    }
    const uint64_t at = static_cast<uint64_t>(reg - shared_regs) * stride + col0;
    if constexpr (Path) return {global_finish + at, global_compute + at, global_comm + at};
    return {global_finish + at, nullptr, nullptr};
  }

  // An operand's lanes: the previous instruction's finish and sums, still in the thread's
  // registers (kEdgeForward), or its register's, from shared or global memory.
  struct Operand {
    double f[W];
    float c[W], m[W];
  };
  LUMOS_HD Operand operand(const PackedEdge& op, const double* prev_f, const float* prev_c,
                           const float* prev_m, double* mine, float* mine_sums,
                           uint64_t col0) const {
    Operand o{};
    if (op.flags & kEdgeForward) {
      for (uint32_t w = 0; w < W; ++w) {
        o.f[w] = prev_f[w];
        if constexpr (Path) o.c[w] = prev_c[w], o.m[w] = prev_m[w];
      }
    } else {
      const Slot s = slot(op.reg, mine, mine_sums, col0);
      for (uint32_t w = 0; w < W; ++w) {
        o.f[w] = s.f[w * T];
        if constexpr (Path) o.c[w] = s.c[w * T], o.m[w] = s.m[w * T];
      }
    }
    return o;
  }

  LUMOS_HD void operator()(uint32_t block, uint32_t t, char* shared) const {
    const uint64_t col0 = static_cast<uint64_t>(block) * W * T + t;  // lane w: col0 + w x T
    // The thread's first words in shared memory (none when no register is kept there); the
    // path's sums follow the finish plane: [register][lane][thread] floats, twice.
    double* mine = shared_regs > 0 ? reinterpret_cast<double*>(shared) + t : nullptr;
    float* mine_sums = Path && shared_regs > 0
                           ? reinterpret_cast<float*>(reinterpret_cast<double*>(shared) +
                                                      static_cast<uint64_t>(shared_regs) * W * T) +
                                 t
                           : nullptr;
    // Each lane's slot factors (SlotView::factor with the lane's part taken out of the loop):
    // rows are read at the lane's column, `slots.variants` (the row stride) leaving room for
    // every lane of the last block (lanes_row_factors), and shapes at the lane's GPU column.
    const double* row_factor = slots.row_factor + v0 + col0;
    uint32_t gpu[W];
    for (uint32_t w = 0; w < W; ++w) {
      const uint64_t col = col0 + w * T;
      // Lanes past the tile's end replay some variant and write only columns no one reads.
      const uint32_t var = v0 + static_cast<uint32_t>(col < width ? col : width - 1);
      gpu[w] = slots.variant_gpu ? slots.variant_gpu[var] : 0;
    }
    double end[W];
    float end_compute[W], end_comm[W];
    for (uint32_t w = 0; w < W; ++w) end[w] = kNoFinish, end_compute[w] = end_comm[w] = 0;
    for (uint32_t k = 0; k < program.steps; ++k)
      for (uint32_t w = 0; w < W; ++w) step_us[k * stride + col0 + w * T] = kNoFinish;
    uint32_t e = 0;
    // The previous instruction's finish and path sums: its readers among the next instruction's
    // operands take them from here (kEdgeForward), not from the register file.
    double prev_f[W] = {};
    float prev_c[W] = {}, prev_m[W] = {};
    for (uint32_t i = 0; i < program.nodes; ++i) {
      const PackedInstr in = program.instr[i];
      double start[W];
      float c[W] = {}, m[W] = {};
      if (e == in.edge_end) {
        for (uint32_t w = 0; w < W; ++w) start[w] = 0.0;
      } else {
        // The first predecessor reaching the maximum sets the path, as on the CPU.
        const PackedEdge first = program.edge[e];
        const Operand a = operand(first, prev_f, prev_c, prev_m, mine, mine_sums, col0);
        for (uint32_t w = 0; w < W; ++w) {
          start[w] = a.f[w] + first.lag_us;
          if constexpr (Path) c[w] = a.c[w], m[w] = a.m[w];
        }
        LUMOS_NO_UNROLL
        for (++e; e < in.edge_end; ++e) {
          const PackedEdge op = program.edge[e];
          const Operand o = operand(op, prev_f, prev_c, prev_m, mine, mine_sums, col0);
          for (uint32_t w = 0; w < W; ++w) {
            const double x = o.f[w] + op.lag_us;
            if (x > start[w]) {
              start[w] = x;
              if constexpr (Path) c[w] = o.c[w], m[w] = o.m[w];
            }
          }
        }
      }
      double dur[W], f[W];
      if (in.slot < slots.rows) {
        const double* row = row_factor + static_cast<uint64_t>(in.slot) * slots.variants;
        for (uint32_t w = 0; w < W; ++w) dur[w] = in.base_us * row[w * T];
      } else {
        const double* shape =
            slots.gemm_factor + static_cast<uint64_t>(in.slot - slots.rows) * slots.gpus;
        for (uint32_t w = 0; w < W; ++w) dur[w] = in.base_us * shape[gpu[w]];
      }
      for (uint32_t w = 0; w < W; ++w) {
        f[w] = start[w] + dur[w];
        if constexpr (Path) {
          if (in.flags & kInstrCompute) c[w] += static_cast<float>(dur[w]);
          if (in.flags & kInstrComm) m[w] += static_cast<float>(dur[w]);
        }
      }
      if (!(in.flags & kInstrNoStore)) {
        const Slot d = slot(in.dst, mine, mine_sums, col0);
        for (uint32_t w = 0; w < W; ++w) {
          d.f[w * T] = f[w];
          if constexpr (Path) d.c[w * T] = c[w], d.m[w * T] = m[w];
        }
      }
      for (uint32_t w = 0; w < W; ++w) {
        prev_f[w] = f[w];
        if constexpr (Path) prev_c[w] = c[w], prev_m[w] = m[w];
      }
      if (in.flags & (kInstrMarks | kInstrMayEnd | kInstrMayEndStep)) {  // few nodes
        if (in.flags & kInstrMarks)  // a step starts at this node's start
          for (uint32_t k = program.marks_offset[i]; k < program.marks_offset[i + 1]; ++k)
            for (uint32_t w = 0; w < W; ++w)
              step_begin[program.marks_step[k] * stride + col0 + w * T] = start[w];
        if (in.flags & kInstrMayEnd)
          for (uint32_t w = 0; w < W; ++w)
            if (f[w] > end[w]) end[w] = f[w], end_compute[w] = c[w], end_comm[w] = m[w];
        if (in.flags & kInstrMayEndStep) {
          double* se =
              step_us + static_cast<uint64_t>((in.flags >> kInstrStepShift) - 1) * stride + col0;
          for (uint32_t w = 0; w < W; ++w) se[w * T] = f[w] > se[w * T] ? f[w] : se[w * T];
        }
      }
    }
    for (uint32_t w = 0; w < W; ++w) {
      const uint64_t col = col0 + w * T;
      makespan_us[col] = end[w];
      cp_compute_us[col] = end_compute[w];
      cp_comm_us[col] = end_comm[w];
      for (uint32_t k = 0; k < program.steps; ++k) {
        double& se = step_us[k * stride + col];
        se = se <= kNoFinish ? 0.0 : se - step_begin[k * stride + col];
      }
    }
  }
};

// The slot table's [row][variant] factors with every row padded by a block's lanes (filled with
// 1), as the kernel reads them: the lanes of a tile's last block past its end read there.
inline std::vector<double> lanes_row_factors(const SlotTable& slots) {
  const uint64_t padded =
      static_cast<uint64_t>(slots.variants) + kLanesPerThread * kLanesBlockThreads;
  std::vector<double> rows(slots.rows * padded, 1.0);
  for (uint64_t r = 0; r < slots.rows; ++r)
    std::copy_n(slots.row_factor.begin() + r * slots.variants, slots.variants,
                rows.begin() + r * padded);
  return rows;
}

// The slot table as the kernel reads it, with `rows` from lanes_row_factors.
inline SlotView lanes_slot_view(const SlotTable& slots, const double* rows) {
  SlotView v = slots.view();
  v.row_factor = rows;
  v.variants = slots.variants + kLanesPerThread * kLanesBlockThreads;
  return v;
}

}  // namespace lumos::replay
