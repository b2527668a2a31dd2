#include "replay/packed_program.hpp"

#include <string>

#include "common/error.hpp"
#include "replay/batch_update.hpp"

namespace lumos::replay {

Forwarding forwarding(const ReplayProgram& p, const graph::Graph& g) {
  const uint32_t n = p.nodes;
  std::vector<uint32_t> at(n), readers(n, 0), next_reads(n, 0);
  for (uint32_t i = 0; i < n; ++i) at[p.order[i]] = i;
  Forwarding f;
  f.forward.assign(g.pred_index.size(), 0);
  f.no_store.assign(n, 0);
  for (graph::NodeId v = 0; v < n; ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const graph::NodeId u = g.pred_index[e];
      ++readers[u];
      if (at[u] + 1 == at[v]) f.forward[e] = 1, ++next_reads[u];
    }
  for (graph::NodeId u = 0; u < n; ++u) f.no_store[u] = readers[u] == next_reads[u];
  return f;
}

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
  const Forwarding fw = forwarding(p, g);
  for (uint32_t i = 0; i < p.nodes; ++i) {
    const graph::NodeId n = p.order[i];
    for (uint32_t e = g.pred_offset[n]; e < g.pred_offset[n + 1]; ++e)
      out.edge.push_back({g.pred_lag_us[e], p.op_reg[e], fw.forward[e] ? kEdgeForward : 0});
    const auto cls = static_cast<uint8_t>(g.cls[n]);
    uint32_t flags = cls == kClassCompute || cls == kClassMemory ? kInstrCompute
                     : cls == kClassComm                         ? kInstrComm
                                                                 : 0;
    if (p.may_end[n]) flags |= kInstrMayEnd;
    if (g.step[n] >= 0 && p.may_end_step[n])
      flags |= kInstrMayEndStep | (static_cast<uint32_t>(g.step[n]) + 1) << kInstrStepShift;
    if (p.marks_offset[n + 1] > p.marks_offset[n]) flags |= kInstrMarks;
    if (fw.no_store[n]) flags |= kInstrNoStore;
    for (uint32_t m = p.marks_offset[n]; m < p.marks_offset[n + 1]; ++m)
      out.marks_step.push_back(p.marks_step[m]);
    out.marks_offset[i + 1] = static_cast<uint32_t>(out.marks_step.size());
    out.instr[i] = {slots.base_us[n], slots.node_slot[n], p.dst[n],
                    static_cast<uint32_t>(out.edge.size()), flags};
  }
  return out;
}

}  // namespace lumos::replay
