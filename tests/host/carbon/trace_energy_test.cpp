// The trace energy `lumos carbon --trace` and `lumos whatif` share, against a hand computation on
// the embedded demo trace: its kernel time summed from the trace's own events by name (GEMMs draw
// as matrix arithmetic, NCCL kernels as communication, the optimizer as memory-bound work), and
// the carbon model's formula written out.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <string_view>

#include "carbon/trace_energy.hpp"
#include "cost/kernels_db.hpp"
#include "engine/engine.hpp"
#include "graph/load_input.hpp"
#include "replay/gemm_table.hpp"
#include "replay/variant_batch.hpp"
#include "trace/demo_trace.hpp"

namespace {

using lumos::carbon::TracedBusy;

// The demo's kernels, by hand: every kernel event of the trace (they all lie inside its three
// ProfilerSteps), and the mean step.
struct HandSums {
  double matrix_us = 0, other_us = 0, comm_us = 0, step_us = 0;
  int steps = 0;
};

HandSums hand_sums() {
  simdjson::dom::parser parser;
  const simdjson::padded_string text(lumos::trace::demo_trace_json());
  HandSums h;
  for (const simdjson::dom::element e : parser.parse(text)["traceEvents"].get_array()) {
    const std::string_view cat = e["cat"].get_string().value();
    const double dur = e["dur"].get_double().value();
    if (cat == "user_annotation") {
      h.step_us += dur, ++h.steps;
      continue;
    }
    if (cat != "kernel") continue;
    const std::string_view name = e["name"].get_string().value();
    if (name.find("gemm") != std::string_view::npos)
      h.matrix_us += dur;
    else if (name.rfind("nccl", 0) == 0)
      h.comm_us += dur;
    else
      h.other_us += dur;
  }
  h.step_us /= h.steps;
  return h;
}

TEST(TraceEnergy, TheDemoTraceMatchesAHandComputation) {
  const lumos::cost::KernelsDb& db = lumos::cost::embedded_db();
  const lumos::graph::LoadedInput in = lumos::graph::load_input("");
  const HandSums h = hand_sums();
  ASSERT_EQ(h.steps, 3);
  ASSERT_GT(h.matrix_us, 0);
  ASSERT_GT(h.comm_us, 0);
  ASSERT_GT(h.other_us, 0);

  const TracedBusy busy = lumos::carbon::traced_kernel_busy_us(in.graph, db);
  EXPECT_NEAR(busy.matrix_us, h.matrix_us, 1e-9 * h.matrix_us);
  EXPECT_NEAR(busy.other_compute_us, h.other_us, 1e-9 * h.other_us);
  EXPECT_EQ(busy.copy_us, 0);
  EXPECT_NEAR(busy.comm_us, h.comm_us, 1e-9 * h.comm_us);

  // One H100 at PUE 1.5 over the mean step: idle power all step, each class's share of
  // (TDP - idle) while its kernels run (per step: the sums over three steps / 3), the node's
  // overhead, and the facility's half of the IT energy on top.
  const lumos::cost::GpuSpec& gpu = db.gpu("h100");
  const lumos::cost::CarbonParams& p = db.carbon;
  const double active_w = gpu.tdp_w - gpu.idle_w, s = h.step_us * 1e-6;
  const double idle_j = gpu.idle_w * s;
  const double matrix_j = active_w * p.compute_bound_fraction * h.matrix_us / 3 * 1e-6;
  const double other_j = active_w * p.memory_bound_fraction * h.other_us / 3 * 1e-6;
  const double comm_j = active_w * p.comm_fraction * h.comm_us / 3 * 1e-6;
  ASSERT_LT(matrix_j + other_j + comm_j, active_w * s);  // under the TDP cap
  const double node_j = p.node_overhead_w_per_gpu * s;
  const double gpu_j = idle_j + matrix_j + other_j + comm_j;
  const lumos::carbon::EnergyParts e =
      lumos::carbon::trace_step_energy(gpu, p, 1.5, h.step_us, busy, 3);
  EXPECT_NEAR(e.gpu_idle_j, idle_j, 1e-9 * idle_j);
  EXPECT_NEAR(e.gpu_compute_j, matrix_j, 1e-9 * matrix_j);
  EXPECT_NEAR(e.gpu_memory_j, other_j, 1e-9 * other_j);
  EXPECT_NEAR(e.gpu_comm_j, comm_j, 1e-9 * comm_j);
  EXPECT_NEAR(e.node_j, node_j, 1e-9 * node_j);
  EXPECT_NEAR(e.total_j(), (gpu_j + node_j) * 1.5, 1e-9 * (gpu_j + node_j) * 1.5);

  // All three steps' kernels squeezed into one step's time: the GPU draws TDP, no more.
  const lumos::carbon::EnergyParts capped =
      lumos::carbon::trace_step_energy(gpu, p, 1.0, h.step_us, busy, 1);
  EXPECT_NEAR(capped.gpu_j(), gpu.tdp_w * s, 1e-9 * gpu.tdp_w * s);
}

// A batch replay's variants measure the same kernel time: as traced, and with the compute class
// twice as fast (the matrix kernels' time halves; communication does not change).
TEST(TraceEnergy, ABatchReplayMeasuresTheSameKernelTime) {
  const lumos::cost::KernelsDb& db = lumos::cost::embedded_db();
  const lumos::graph::LoadedInput in = lumos::graph::load_input("");
  const HandSums h = hand_sums();
  lumos::replay::VariantBatch batch = lumos::replay::VariantBatch::identity(2);
  batch.speed[static_cast<int>(lumos::graph::NodeClass::kCompute)][1] = 2;
  const lumos::replay::BatchResult r =
      lumos::engine::batch_replay(in.graph, batch, lumos::engine::Backend::kCpu);
  const std::vector<TracedBusy> busy =
      lumos::carbon::batch_kernel_busy_us(in.graph, db, batch, r, lumos::replay::GemmPricing{});
  ASSERT_EQ(busy.size(), 2u);
  for (int v = 0; v < 2; ++v) {
    const double speed = v == 0 ? 1 : 2;
    EXPECT_NEAR(busy[v].matrix_us, h.matrix_us / speed, 1e-9 * h.matrix_us) << v;
    EXPECT_NEAR(busy[v].other_compute_us, h.other_us / speed, 1e-9 * h.other_us) << v;
    EXPECT_NEAR(busy[v].comm_us, h.comm_us, 1e-9 * h.comm_us) << v;
    EXPECT_EQ(busy[v].copy_us, 0) << v;
  }
}

}  // namespace
