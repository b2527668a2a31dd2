// The graphs a trace-driven sweep (`lumos sweep --trace`) builds, their kernels calibrated on the
// trace, fold their steady state to the whole graph's step time and busy times.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/trace_structural.hpp"
#include "graph/load_input.hpp"
#include "host/model/slot_replay.hpp"
#include "host/whatif/generated_job.hpp"
#include "model/step_graph.hpp"

using namespace lumos::model;

TEST(FoldedTraceCalibration, CalibratedGraphsFoldToTheWholeGraphsStepTime) {
  const auto& db = lumos::cost::embedded_db();
  lumos::testing::TempDir tmp;
  lumos::testing::JobConfig job;  // GPT-3 15B, 8 layers, TP 2 x PP 2 x DP 4, GBS 16
  lumos::testing::write_job(job, tmp.file("job"));
  const auto input = lumos::graph::load_job(tmp.file("job"));
  lumos::estimate::StructuralRequest q;
  q.model = preset(job.model);
  const lumos::estimate::CalibratedTrace cal = lumos::estimate::calibrate_trace(input, q, db);
  int folded_graphs = 0;
  for (int pp : {1, 2, 4})
    for (int64_t gbs : {16, 64, 512}) {
      ParallelConfig c = cal.traced.cfg;
      c.pp = pp;
      c.gbs = gbs;
      const Layout l = check_layout(cal.traced.model, c);
      const auto& gpu = db.gpu(cal.request.gpu);
      StepCosts plain = price_step(cal.traced.model, c, l, db, gpu, db.default_topology_for(gpu));
      StepCosts k = plain;
      cal.calibrate(k, db);
      ASSERT_TRUE(same_structure(plain, k));
      const StepGraph whole = build_step_graph(cal.traced.model, c, l, k);
      const StepGraph folded =
          build_step_graph(cal.traced.model, c, l, k, kMaxStepGraphNodes, true);
      folded_graphs += folded.microbatch_folds.empty() ? 0 : 1;
      // The calibrated costs and the model's own, through the same graphs.
      std::vector<std::vector<double>> ws, fs;
      const auto a =
          lumos::model::testing::replay_with(whole, {k, plain}, {kUnitSpeeds, kUnitSpeeds}, &ws);
      const auto b =
          lumos::model::testing::replay_with(folded, {k, plain}, {kUnitSpeeds, kUnitSpeeds}, &fs);
      for (uint32_t v = 0; v < 2; ++v) {
        SCOPED_TRACE("pp " + std::to_string(pp) + " gbs " + std::to_string(gbs) + " variant " +
                     std::to_string(v));
        EXPECT_NEAR(b.makespan_us[v], a.makespan_us[v], 1e-9 * a.makespan_us[v]);
        EXPECT_NEAR(compute_busy_us(folded, fs[v]), compute_busy_us(whole, ws[v]),
                    1e-9 * a.makespan_us[v]);
      }
      EXPECT_NE(a.makespan_us[0], a.makespan_us[1]);  // the calibration changes the step
    }
  EXPECT_GE(folded_graphs, 4);
}
