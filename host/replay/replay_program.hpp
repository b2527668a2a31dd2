// A graph compiled once into a straight-line replay program over live-state registers
// (docs/design.md "Replay engines"): instruction i computes node i's finish time into a register
// from its predecessors' registers and lags; a register is reused once the last successor of
// its node has read it (liveness along the topological order). A batch replay then keeps
// max_live x tile values of state instead of nodes x tile, so a tile of variants stays in cache.
// Step ends, step starts and the critical path's composition are accumulated as the program
// runs, so no node's state is needed after its last reader.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/graph.hpp"

namespace lumos::replay {

struct ReplayProgram {
  uint32_t nodes = 0;
  uint32_t max_live = 0;  // registers the program needs
  // Registers [0, short_regs) hold values read soon after they are computed, the others values
  // that wait long for a reader (allocated from two pools, each lowest-free-first).
  uint32_t short_regs = 0;
  std::vector<uint32_t> order;   // [instruction]: the node it computes (a topological order)
  std::vector<uint32_t> dst;     // [node]: register its finish time goes to
  std::vector<uint32_t> op_reg;  // [edge, as pred_index]: register of that predecessor
  // [node]: whether it can finish last. A node with a successor edge of non-negative lag cannot
  // finish after that successor, so only the others are compared for the makespan.
  std::vector<uint8_t> may_end;
  std::vector<uint8_t> may_end_step;   // the same within its step (a successor in the same step)
  std::vector<uint32_t> marks_offset;  // [node + 1]: steps whose start is this node's start
  std::vector<uint32_t> marks_step;
};

// The order follows each chain of work as far as it goes before another (depth first), which
// keeps few values waiting for a reader: on pipeline graphs an order of a few stages' frontiers
// rather than the width of a wavefront. Registers are given lowest-free-first from two pools:
// short-lived values first, then long-lived ones (short_regs).
ReplayProgram compile_program(const graph::Graph& g);

// The graph as it stands as a program: nodes in their order (a flattened graph's order is
// topological), one register per node. Building it is a copy, where compile_program orders and
// allocates: about four one-variant replays of the graph. A batch of one variant (each layout of a
// layout search) replays it at the cost of a state as large as the graph (8 bytes per node), with
// the same arithmetic, so the same bits. Throws InputError when a node reads a later one.
ReplayProgram node_order_program(const graph::Graph& g);

// The program's working set: the fewest registers that, kept as the most recently used, serve
// 99% of its register reads (LRU stack distance). Lowest-free-first allocation reuses few
// registers for the work in flight; most of the others hold values read once, much later (on a
// generated GPT-3 175B iteration, parameter all-gathers live through the forward pass), so the
// CPU backend sizes a tile of variants to this, not to max_live. O(reads log reads); not part of
// compile_program, whose callers with few variants (a sweep's graphs) have no use for it.
uint32_t hot_registers(const ReplayProgram& p, const graph::Graph& g);

}  // namespace lumos::replay
