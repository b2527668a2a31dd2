#include "replay/replay_program.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>

namespace lumos::replay {

namespace {

// What a program keeps beside its instructions: which nodes may end the step or the graph (no
// non-negative edge leaves them within it) and which step markers each instruction carries.
void add_ends_and_marks(const graph::Graph& g, ReplayProgram* prog) {
  ReplayProgram& p = *prog;
  const uint32_t n = g.num_nodes();
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
}

// Free registers of one pool, the lowest taken first: a bitmap scanned from the lowest word that
// may hold one (a min-heap gave the same registers at a log-time sift per free and take).
class LowestFree {
 public:
  bool empty() {
    while (low_ < words_.size() && words_[low_] == 0) ++low_;
    return low_ == words_.size();
  }
  uint32_t take() {  // after !empty()
    const uint64_t w = words_[low_];
    words_[low_] = w & (w - 1);
    return static_cast<uint32_t>(low_ * 64 + static_cast<size_t>(std::countr_zero(w)));
  }
  void give(uint32_t reg) {
    const size_t w = reg / 64;
    if (w >= words_.size()) words_.resize(w + 1, 0);
    words_[w] |= uint64_t{1} << (reg % 64);
    low_ = std::min(low_, w);
  }

 private:
  std::vector<uint64_t> words_;
  size_t low_ = 0;
};

}  // namespace

ReplayProgram compile_program(const graph::Graph& g) {
  // Values read within this many instructions of being computed take the low registers, which
  // the device kernel keeps in shared memory (lanes_thread.hpp). Measured with 8-4,096: at 256
  // the short pool is 18 registers serving 97.9% of the reads on the generated GPT-3 175B
  // iteration, 48 serving 97.5% on Llama 3 405B, 7 serving 99.7% on the largest shared trace
  // (max_live 581, 1,304, 18 against 565, 1,258, 13 with one pool).
  constexpr uint32_t kShortLifetime = 256;
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
  // The last instruction that reads each node: instructions run in order, so the last one met.
  constexpr uint32_t kUnread = UINT32_MAX;
  std::vector<uint32_t> last_read(n, kUnread);
  for (uint32_t i = 0; i < n; ++i) {
    const graph::NodeId v = p.order[i];
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
      last_read[g.pred_index[e]] = i;
  }
  p.dst.resize(n);
  p.op_reg.resize(g.pred_index.size());
  // Two pools, each given lowest-free-first: values read within kShortLifetime instructions of
  // being computed, and the others (numbered after the first pool once its size is known).
  std::vector<uint8_t> long_lived(n, 0);
  LowestFree free_regs[2];
  uint32_t next_reg[2] = {0, 0};
  for (uint32_t i = 0; i < n; ++i) {
    const graph::NodeId v = p.order[i];
    const uint8_t pool = last_read[v] != kUnread && last_read[v] - i > kShortLifetime;
    long_lived[v] = pool;
    // The destination never aliases an operand: operands are released after the instruction,
    // those whose last reader it is (an operand read twice is freed twice: a set, no matter).
    p.dst[v] = free_regs[pool].empty() ? next_reg[pool]++ : free_regs[pool].take();
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const graph::NodeId u = g.pred_index[e];
      if (last_read[u] == i) free_regs[long_lived[u]].give(p.dst[u]);
    }
    if (last_read[v] == kUnread) free_regs[pool].give(p.dst[v]);  // a sink: read at once, then free
  }
  p.short_regs = next_reg[0];
  p.max_live = next_reg[0] + next_reg[1];
  for (graph::NodeId v = 0; v < n; ++v)
    if (long_lived[v]) p.dst[v] += p.short_regs;
  for (uint32_t e = 0; e < g.pred_index.size(); ++e) p.op_reg[e] = p.dst[g.pred_index[e]];
  add_ends_and_marks(g, &p);
  return p;
}

ReplayProgram node_order_program(const graph::Graph& g) {
  const uint32_t n = g.num_nodes();
  for (graph::NodeId v = 0; v < n; ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e)
      LUMOS_EXPECT(g.pred_index[e] < v, "replay program: node " + std::to_string(v) +
                                            " reads a later node; the graph is not in order");
  ReplayProgram p;
  p.nodes = n;
  p.order.resize(n);
  p.dst.resize(n);
  for (uint32_t i = 0; i < n; ++i) p.order[i] = p.dst[i] = i;
  p.op_reg.assign(g.pred_index.begin(), g.pred_index.end());
  p.short_regs = p.max_live = n;
  add_ends_and_marks(g, &p);
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

}  // namespace lumos::replay
