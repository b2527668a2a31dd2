// A replay program (replay_program.hpp) packed for the device kernel (lanes_thread.hpp): one
// 24-byte record per instruction, in program order, carrying everything the instruction needs
// (its duration, slot, register, class, end and step bits), and one 16-byte record per operand,
// in the same order, so a thread walks both arrays front to back with no indirection through
// node ids. Every thread of a warp reads the same record: one broadcast load.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/graph.hpp"
#include "replay/replay_program.hpp"
#include "replay/slot_table.hpp"

namespace lumos::replay {

// PackedInstr::flags: the class's path bucket, whether the node can end the replay or its step,
// whether it marks steps' starts, whether its finish needs no register (kInstrNoStore: no reader
// but the next instruction, which takes it forwarded), and its step + 1 (0: outside every step)
// from bit 8.
constexpr uint32_t kInstrCompute = 1, kInstrComm = 2, kInstrMayEnd = 4, kInstrMayEndStep = 8,
                   kInstrMarks = 16, kInstrNoStore = 32, kInstrStepShift = 8;
// PackedEdge::flags: the operand is the previous instruction's finish, still in a thread's own
// registers (forwarded), not read from the register file.
constexpr uint32_t kEdgeForward = 1;
constexpr uint32_t kMaxPackedSteps = (1u << (32 - kInstrStepShift)) - 2;

struct PackedInstr {
  double base_us;     // the duration its slot factor multiplies (slot_table.hpp)
  uint32_t slot;      // its slot
  uint32_t dst;       // register its finish goes to
  uint32_t edge_end;  // operands: edges [the previous instruction's edge_end, edge_end)
  uint32_t flags;
};

struct PackedEdge {
  double lag_us;
  uint32_t reg;  // register of the predecessor
  uint32_t flags = 0;
};

// Which operands the previous instruction computed (`forward`, per edge in the graph's
// pred_index order) and which finishes no later instruction reads from a register (`no_store`,
// per node): on the programs' depth-first orders most operands are (85% of the reads on the
// largest shared trace, 41% on a generated GPT-3 175B iteration), so a GPU thread keeps them in
// its registers instead of shared memory.
struct Forwarding {
  std::vector<uint8_t> forward;   // [edge]
  std::vector<uint8_t> no_store;  // [node]
};
Forwarding forwarding(const ReplayProgram& p, const graph::Graph& g);

struct PackedProgram {
  uint32_t nodes = 0, steps = 0, max_live = 0, short_regs = 0;
  std::vector<PackedInstr> instr;      // [instruction]
  std::vector<PackedEdge> edge;        // in instruction order
  std::vector<uint32_t> marks_offset;  // [instruction + 1]: steps whose start is its start
  std::vector<uint32_t> marks_step;
};

// Throws InputError when the graph has more steps than the flags hold (kMaxPackedSteps).
PackedProgram pack_program(const ReplayProgram& p, const graph::Graph& g, const SlotTable& slots);

}  // namespace lumos::replay
