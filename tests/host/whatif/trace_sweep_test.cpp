// A trace-driven sweep (`lumos sweep --trace`): the traced job's calibration applies to every
// configuration, and each row equals `lumos whatif` of that structural edit on the same trace.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "estimate/trace_structural.hpp"
#include "generated_job.hpp"
#include "graph/load_input.hpp"
#include "sweep/sweep_run.hpp"

namespace {

using lumos::estimate::StructuralRequest;

TEST(TraceSweep, RowsEqualTheStructuralWhatifOfEachConfiguration) {
  const auto& db = lumos::cost::embedded_db();
  lumos::testing::TempDir tmp;
  lumos::testing::JobConfig traced;  // GPT-3 15B, 8 layers, TP 2 x PP 2 x DP 4, GBS 16
  lumos::testing::write_job(traced, tmp.file("job"));
  const auto input = lumos::graph::load_job(tmp.file("job"));
  StructuralRequest q;
  q.model = lumos::model::preset(traced.model);
  const lumos::estimate::CalibratedTrace cal = lumos::estimate::calibrate_trace(input, q, db);
  lumos::sweep::SweepSpec spec;
  spec.model = cal.traced.model;
  const auto& c = cal.traced.cfg;
  spec.tp = {1, 2, 4};
  spec.pp = {1, 2, 4};
  spec.dp = {c.dp};
  spec.cp = {c.cp};
  spec.mbs = {c.mbs};
  spec.gbs = {c.gbs};
  spec.interleave = {c.interleave};
  spec.recompute = {c.recompute};
  spec.sequence_parallel = {c.sequence_parallel ? 1 : 0};
  spec.distributed_optimizer = {c.distributed_optimizer ? 1 : 0};
  spec.stacks = {c.stack};
  spec.dtypes = {c.dtype};
  spec.gpus = {cal.request.gpu, "b200"};
  spec.adjust_costs = [&](lumos::model::StepCosts& k) { cal.calibrate(k, db); };
  const lumos::sweep::SweepResult r = lumos::sweep::run_sweep(spec, db, {});
  int compared = 0;
  for (const auto& row : r.rows) {
    if (!row.estimated) continue;
    StructuralRequest edit = q;
    edit.edit.tp = row.variant.cfg.tp;
    edit.edit.pp = row.variant.cfg.pp;
    edit.target_gpu = row.variant.gpu;
    const double whatif =
        lumos::estimate::run_structural_whatif(input, edit, db).edited.estimate.step_time_us;
    EXPECT_NEAR(row.step_time_us, whatif, 1e-6 * whatif)
        << "tp " << row.variant.cfg.tp << " pp " << row.variant.cfg.pp << " " << row.variant.gpu;
    ++compared;
  }
  EXPECT_GE(compared, 8);
  // Without the calibration, the rows are the model's own estimates, not the trace's.
  spec.adjust_costs = nullptr;
  const lumos::sweep::SweepResult plain = lumos::sweep::run_sweep(spec, db, {});
  bool differs = false;
  for (size_t i = 0; i < r.rows.size(); ++i)
    differs =
        differs || (r.rows[i].estimated && plain.rows[i].step_time_us != r.rows[i].step_time_us);
  EXPECT_TRUE(differs);
}

}  // namespace
