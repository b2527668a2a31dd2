#include "replay/packed_program.hpp"

#include <string>

#include "common/error.hpp"
#include "replay/batch_update.hpp"

namespace lumos::replay {

PackedProgram pack_program(const ReplayProgram& p, const graph::Graph& g, const SlotTable& slots) {
  LUMOS_EXPECT(g.steps.size() <= kMaxPackedSteps,
               "batch replay: " + std::to_string(g.steps.size()) +
                   " steps; the device program holds at most " + std::to_string(kMaxPackedSteps));
  LUMOS_EXPECT(p.nodes == g.num_nodes() && slots.base_us.size() == g.num_nodes(),
               "batch replay: the program or the slot table was built from another graph");
  PackedProgram out;
  out.nodes = p.nodes;
  out.steps = static_cast<uint32_t>(g.steps.size());
  out.max_live = p.max_live;
  out.short_regs = p.short_regs;
  out.instr.resize(p.nodes);
  out.edge.reserve(g.pred_index.size());
  out.marks_offset.assign(p.nodes + 1, 0);
  out.marks_step.reserve(p.marks_step.size());
  for (uint32_t i = 0; i < p.nodes; ++i) {
    const graph::NodeId n = p.order[i];
    for (uint32_t e = g.pred_offset[n]; e < g.pred_offset[n + 1]; ++e)
      out.edge.push_back({g.pred_lag_us[e], p.op_reg[e]});
    const auto cls = static_cast<uint8_t>(g.cls[n]);
    uint32_t flags = cls == kClassCompute || cls == kClassMemory ? kInstrCompute
                     : cls == kClassComm                         ? kInstrComm
                                                                 : 0;
    if (p.may_end[n]) flags |= kInstrMayEnd;
    if (g.step[n] >= 0 && p.may_end_step[n])
      flags |= kInstrMayEndStep | (static_cast<uint32_t>(g.step[n]) + 1) << kInstrStepShift;
    if (p.marks_offset[n + 1] > p.marks_offset[n]) flags |= kInstrMarks;
    for (uint32_t m = p.marks_offset[n]; m < p.marks_offset[n + 1]; ++m)
      out.marks_step.push_back(p.marks_step[m]);
    out.marks_offset[i + 1] = static_cast<uint32_t>(out.marks_step.size());
    out.instr[i] = {slots.base_us[n], slots.node_slot[n], p.dst[n],
                    static_cast<uint32_t>(out.edge.size()), flags};
  }
  return out;
}

}  // namespace lumos::replay
