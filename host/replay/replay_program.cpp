#include "replay/replay_program.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>

namespace lumos::replay {

ReplayProgram compile_program(const graph::Graph& g) {
  const uint32_t n = g.num_nodes();
  ReplayProgram p;
  p.nodes = n;
  // Order: GPU work (and rendezvous) as soon as it is ready, CPU work in its traced time order.
  // A CPU thread runs far ahead of its GPU (thousands of launches queued), so computing each
  // kernel as soon as its launch and its stream predecessor are known keeps few launches
  // waiting; only work behind another rank's progress waits, and time order keeps ranks level.
  const graph::Successors succ = graph::successors_of(g);
  std::vector<uint32_t> waiting(n);
  for (graph::NodeId v = 0; v < n; ++v) waiting[v] = g.pred_offset[v + 1] - g.pred_offset[v];
  using Key = std::pair<double, graph::NodeId>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready_cpu;
  std::vector<graph::NodeId> ready_gpu;  // depth first
  // CPU work is taken in the time order its values are first needed off the CPU (the start of
  // the kernel a launch starts), not its own: a launch computed long before its kernel runs only
  // holds a register (on the generated GPT-3 175B iteration, 565 instead of 971).
  std::vector<double> needed_us(n);
  for (graph::NodeId v = 0; v < n; ++v) {
    if (g.cls[v] != graph::NodeClass::kCpu) continue;
    double t = std::numeric_limits<double>::infinity();
    for (uint32_t e = succ.offset[v]; e < succ.offset[v + 1]; ++e)
      if (g.cls[succ.index[e]] != graph::NodeClass::kCpu)
        t = std::min(t, g.measured_start_us[succ.index[e]]);
    needed_us[v] = std::isinf(t) ? g.measured_start_us[v] : std::max(t, g.measured_start_us[v]);
  }
  auto make_ready = [&](graph::NodeId v) {
    if (g.cls[v] == graph::NodeClass::kCpu)
      ready_cpu.emplace(needed_us[v], v);
    else
      ready_gpu.push_back(v);
  };
  for (graph::NodeId v = n; v-- > 0;)
    if (waiting[v] == 0) make_ready(v);
  p.order.reserve(n);
  while (!ready_gpu.empty() || !ready_cpu.empty()) {
    graph::NodeId u;
    if (!ready_gpu.empty()) {
      u = ready_gpu.back();
      ready_gpu.pop_back();
    } else {
      u = ready_cpu.top().second;
      ready_cpu.pop();
    }
    p.order.push_back(u);
    for (uint32_t e = succ.offset[u + 1]; e-- > succ.offset[u];)
      if (--waiting[succ.index[e]] == 0) make_ready(succ.index[e]);
  }
  LUMOS_EXPECT(p.order.size() == n, "replay program: the graph has a cycle (" +
                                        std::to_string(n - p.order.size()) +
                                        " nodes never become ready)");
  // Position of each node in the order, and the last instruction that reads it.
  std::vector<uint32_t> at(n);
  for (uint32_t i = 0; i < n; ++i) at[p.order[i]] = i;
  constexpr uint32_t kUnread = UINT32_MAX;
  std::vector<uint32_t> last_read(n, kUnread);
  for (graph::NodeId v = 0; v < n; ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      uint32_t& l = last_read[g.pred_index[e]];
      l = l == kUnread ? at[v] : std::max(l, at[v]);
    }
  // Frees per instruction: the nodes whose last reader it is.
  std::vector<uint32_t> free_offset(n + 1, 0);
  for (graph::NodeId u = 0; u < n; ++u)
    if (last_read[u] != kUnread) ++free_offset[last_read[u] + 1];
  for (uint32_t i = 0; i < n; ++i) free_offset[i + 1] += free_offset[i];
  std::vector<uint32_t> free_node(free_offset[n]);
  {
    std::vector<uint32_t> fill(free_offset.begin(), free_offset.end() - 1);
    for (graph::NodeId u = 0; u < n; ++u)
      if (last_read[u] != kUnread) free_node[fill[last_read[u]]++] = u;
  }
  p.dst.resize(n);
  p.op_reg.resize(g.pred_index.size());
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> free_regs;
  uint32_t next_reg = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const graph::NodeId v = p.order[i];
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
      p.op_reg[e] = p.dst[g.pred_index[e]];
    // The destination never aliases an operand: operands are released after the instruction.
    if (free_regs.empty()) {
      p.dst[v] = next_reg++;
    } else {
      p.dst[v] = free_regs.top();
      free_regs.pop();
    }
    for (uint32_t k = free_offset[i]; k < free_offset[i + 1]; ++k)
      free_regs.push(p.dst[free_node[k]]);
    if (last_read[v] == kUnread) free_regs.push(p.dst[v]);  // a sink: read at once, then free
  }
  p.max_live = next_reg;
  p.may_end.assign(n, 1);
  p.may_end_step.assign(n, 1);
  for (graph::NodeId v = 0; v < n; ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
      if (g.pred_lag_us[e] >= 0) {
        const graph::NodeId u = g.pred_index[e];
        p.may_end[u] = 0;
        if (g.step[u] == g.step[v]) p.may_end_step[u] = 0;
      }
  p.marks_offset.assign(n + 1, 0);
  for (const auto& s : g.steps) ++p.marks_offset[s.marker + 1];
  for (uint32_t i = 0; i < n; ++i) p.marks_offset[i + 1] += p.marks_offset[i];
  p.marks_step.resize(g.steps.size());
  std::vector<uint32_t> fill(p.marks_offset.begin(), p.marks_offset.end() - 1);
  for (uint32_t k = 0; k < g.steps.size(); ++k) p.marks_step[fill[g.steps[k].marker]++] = k;
  return p;
}

// Register accesses in program order (each instruction reads its operands, then writes its
// destination); the LRU stack distance of a read is the number of distinct registers accessed
// since that register's last access. A Fenwick tree over access times marks each register's
// latest access, so a distance is a count of marks after a time.
uint32_t hot_registers(const ReplayProgram& p, const graph::Graph& g) {
  const uint64_t accesses = g.pred_index.size() + p.nodes;
  if (p.nodes == 0) return 0;
  std::vector<uint32_t> tree(accesses + 1, 0);
  auto add = [&](uint64_t t, int32_t d) {
    for (++t; t <= accesses; t += t & (~t + 1)) tree[t] += d;
  };
  auto prefix = [&](uint64_t t) {  // marks at times < t
    uint32_t s = 0;
    for (; t > 0; t -= t & (~t + 1)) s += tree[t];
    return s;
  };
  constexpr uint64_t kNever = UINT64_MAX;
  std::vector<uint64_t> last(p.max_live, kNever);
  std::vector<uint64_t> histogram(p.max_live + 1, 0);  // reads by distance
  uint64_t now = 0, marks = 0, reads = 0;
  auto touch = [&](uint32_t reg) {
    if (last[reg] != kNever) add(last[reg], -1), --marks;
    add(now, 1), ++marks;
    last[reg] = now++;
  };
  for (const uint32_t v : p.order) {
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const uint32_t reg = p.op_reg[e];
      ++histogram[marks - prefix(last[reg] + 1)];  // distinct registers touched since
      ++reads;
      touch(reg);
    }
    touch(p.dst[v]);
  }
  const uint64_t served = reads - reads / 100;  // 99%
  uint64_t sum = 0;
  for (uint32_t d = 0; d <= p.max_live; ++d)
    if ((sum += histogram[d]) >= served) return std::max(1u, d + 1);
  return p.max_live;
}

ProgramView program_view(const ReplayProgram& p, const graph::Graph& g) {
  ProgramView v;
  v.nodes = p.nodes;
  v.order = p.order.data();
  v.dst = p.dst.data();
  v.op_reg = p.op_reg.data();
  v.may_end = p.may_end.data();
  v.may_end_step = p.may_end_step.data();
  v.marks_offset = p.marks_offset.data();
  v.marks_step = p.marks_step.data();
  v.step_of = g.step.data();
  v.steps = static_cast<uint32_t>(g.steps.size());
  return v;
}

}  // namespace lumos::replay
