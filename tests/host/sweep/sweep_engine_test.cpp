// A sweep through the batch engine: its batches run through the CUDA backend's kernel body on
// the host launcher equal the CPU backend and the sweep's rows (so the device path of a sweep is
// covered on machines without a GPU), and configurations that differ only in durations (GPU type,
// network, a stack's constants) share one graph while every row stays `lumos estimate`'s.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "cost/kernels_db.hpp"
#include "engine/engine.hpp"
#include "estimate/estimate.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/batch_replay.hpp"
#include "support/sweep_test_util.hpp"
#include "sweep/sweep_batch.hpp"
#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"

namespace {

using namespace lumos::sweep;
using lumos::model::StepCosts;

// One interleaved pipeline layout of a small GPT on three GPU types and three network rates.
SweepSpec one_layout_spec() {
  SweepSpec s;
  s.model = lumos::model::preset("gpt3-15b");
  s.model.layers = 8;
  s.total_gpus = {16};
  s.tp = {2};
  s.pp = {4};
  s.interleave = {2};
  s.mbs = {1};
  s.gbs = {16};
  s.gpus = {"h100", "a100", "b200"};
  s.nic_gbps = {0, 12.5, 50};
  return s;
}

}  // namespace

TEST(SweepEngine, ASweepsBatchThroughTheDeviceBodyEqualsTheCpuBackendAndItsRows) {
  const auto& db = lumos::cost::embedded_db();
  const SweepSpec spec = one_layout_spec();
  SweepOptions opt;
  opt.backend = lumos::engine::Backend::kCpu;
  const SweepResult r = run_sweep(spec, db, opt);
  ASSERT_EQ(r.rows.size(), 9u);
  ASSERT_EQ(r.stats.graphs, 1u) << "GPU types and network rates share one graph";
  // The sweep's graph and batch, built again as the sweep builds them.
  const lumos::model::ParallelConfig& cfg = r.rows.front().variant.cfg;
  const lumos::model::Layout layout = lumos::model::check_layout(spec.model, cfg);
  std::vector<StepCosts> priced;
  // Priced costs point at their topology (StepCosts::topo), which the graph builder reads: each
  // stays alive as long as its costs.
  std::vector<lumos::cost::Topology> topos;
  topos.reserve(r.rows.size());
  for (const SweepRow& row : r.rows) {
    ASSERT_TRUE(row.feasible) << row.reason;
    topos.push_back(db.topology(row.variant.topology));
    topos.back().nic_gbps = row.variant.nic_gbps;
    priced.push_back(lumos::model::price_step(spec.model, cfg, layout, db, db.gpu(row.variant.gpu),
                                              topos.back(), spec.cost_options));
  }
  const lumos::model::StepGraph sg = lumos::model::build_step_graph(
      spec.model, cfg, layout, priced.front(), lumos::model::kMaxStepGraphNodes, true);
  std::vector<const StepCosts*> costs;
  for (const StepCosts& c : priced) costs.push_back(&c);
  const SlotBatch sb = slot_batch(
      sg, costs, std::vector<lumos::model::ClassSpeeds>(costs.size(), lumos::model::kUnitSpeeds));
  const auto cpu = lumos::replay::batch_replay_cpu(sg.graph, sb.batch);
  for (bool path : {true, false}) {
    // One variant per tile as well as all in one: the device's tiling of a sweep's batch.
    for (uint32_t tile : {0u, 1u}) {
      const auto device = lumos::replay::batch_replay_device_body(sg.graph, sb.batch, nullptr, path,
                                                                  UINT32_MAX, tile);
      for (uint32_t v = 0; v < sb.batch.count; ++v) {
        const double want = r.rows[v].step_time_us;
        EXPECT_NEAR(device.makespan_us[v], cpu.makespan_us[v], 1e-9 * want) << v;
        EXPECT_NEAR(device.makespan_us[v], want, 1e-9 * want) << "row " << v;
        if (path) EXPECT_NEAR(device.cp_compute_us[v], cpu.cp_compute_us[v], 1e-6 * want) << v;
      }
    }
  }
  // The rows differ: the batch is not one variant repeated.
  EXPECT_GT(std::fabs(r.rows[0].step_time_us - r.rows[3].step_time_us), 1.0);
}

TEST(SweepEngine, StacksThatDifferOnlyInConstantsShareAGraphAndEqualEstimates) {
  // A stack with megatron-core's kernels, flags and constants under another name builds the same
  // graph; megatron-2021 (unfused attention, blocking P2P) another.
  lumos::cost::KernelsDb db = lumos::cost::embedded_db();
  lumos::cost::StackSpec twin = db.stack("megatron-core");
  twin.name = "megatron-core-twin";
  db.stacks[twin.name] = twin;
  SweepSpec spec = one_layout_spec();
  spec.nic_gbps = {0};
  spec.gpus = {"h100"};
  spec.stacks = {"megatron-core", "megatron-core-twin", "megatron-2021"};
  SweepOptions opt;
  opt.backend = lumos::engine::Backend::kCpu;
  const SweepResult r = run_sweep(spec, db, opt);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.stats.groups, 1u);
  EXPECT_EQ(r.stats.graphs, 2u);
  std::map<std::string, double> step_of_stack;
  for (const SweepRow& row : r.rows) {
    ASSERT_TRUE(row.feasible) << row.variant.cfg.stack << ": " << row.reason;
    const auto e = lumos::test::estimate_of(spec, row, db);
    EXPECT_NEAR(row.step_time_us, e.step_time_us, 1e-9 * e.step_time_us) << row.variant.cfg.stack;
    double worst = 0;
    for (const auto& s : e.stages) worst = std::max(worst, s.memory.total_bytes());
    EXPECT_NEAR(row.memory_gib, worst / (1024.0 * 1024 * 1024), 1e-9 * row.memory_gib)
        << row.variant.cfg.stack;
    step_of_stack[row.variant.cfg.stack] = row.step_time_us;
  }
  EXPECT_NE(step_of_stack["megatron-2021"], step_of_stack["megatron-core"]);
}

TEST(SweepEngine, AutoRunsOnTheBackendEngineReports) {
  // Without a visible GPU auto is the CPU backend; the sweep's rows are the same either way.
  const auto& db = lumos::cost::embedded_db();
  const SweepSpec spec = one_layout_spec();
  SweepOptions cpu, autob;
  cpu.backend = lumos::engine::Backend::kCpu;
  const SweepResult a = run_sweep(spec, db, cpu), b = run_sweep(spec, db, autob);
  const bool gpu = lumos::engine::cuda_available();
  EXPECT_EQ(lumos::engine::resolve(lumos::engine::Backend::kAuto),
            gpu ? lumos::engine::Backend::kCuda : lumos::engine::Backend::kCpu);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i)
    EXPECT_NEAR(a.rows[i].step_time_us, b.rows[i].step_time_us, 1e-9 * a.rows[i].step_time_us);
}
