// lumos sweep's engine: every row equals `lumos estimate` of its configuration, shards partition
// the sweep exactly, infeasible configurations keep their reason, and axes parse or fail in one
// line.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <set>
#include <sstream>

#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "report/sweep_csv.hpp"
#include "support/sweep_test_util.hpp"
#include "sweep/pareto_csv.hpp"
#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"
#include "whatif/speed_axes.hpp"

namespace {

using namespace lumos::sweep;

// A small GPT on 8 to 32 GPUs of three types and two networks: a few hundred configurations.
SweepSpec small_spec() {
  SweepSpec s;
  s.model = lumos::model::preset("gpt3-15b");
  s.model.layers = 8;
  s.total_gpus = {8, 16, 32};
  s.tp = {1, 2, 4};
  s.pp = {1, 2, 4};
  s.mbs = {1, 2};
  s.gbs = {32};
  s.recompute = {lumos::model::Recompute::kNone, lumos::model::Recompute::kFull};
  s.gpus = {"h100", "a100", "b200"};
  s.topologies = {"", "dgx-a100"};
  s.nic_gbps = {0, 12.5};
  s.fsdp = {0, 1};
  s.dtypes = {lumos::cost::Dtype::kBf16, lumos::cost::Dtype::kFp8};
  return s;
}

std::string csv_of(const SweepResult& r) {
  std::ostringstream os;
  lumos::report::sweep_csv(os, r);
  return os.str();
}

TEST(Sweep, RowsEqualIndividualEstimates) {
  const auto& db = lumos::cost::embedded_db();
  const SweepSpec spec = small_spec();
  const SweepResult r = run_sweep(spec, db, {});
  ASSERT_EQ(r.rows.size(), expand(spec).size());
  std::vector<const SweepRow*> estimated;
  for (const auto& row : r.rows)
    if (row.estimated) estimated.push_back(&row);
  ASSERT_GE(estimated.size(), 20u);
  EXPECT_LT(r.stats.graphs * 4, r.stats.estimated)
      << "configurations of one structure share a graph";
  std::mt19937 rng(42);
  std::shuffle(estimated.begin(), estimated.end(), rng);
  for (size_t k = 0; k < 20; ++k) {
    const SweepRow& row = *estimated[k];
    const auto e = lumos::test::estimate_of(spec, row);
    const std::string what = row.variant.gpu + "/" + row.variant.topology + " index " +
                             std::to_string(row.variant.index);
    EXPECT_NEAR(row.step_time_us, e.step_time_us, 1e-6 * e.step_time_us) << what;
    EXPECT_NEAR(row.tokens_per_s, e.tokens_per_s, 1e-6 * e.tokens_per_s) << what;
    EXPECT_NEAR(row.mfu, e.mfu, 1e-6 * e.mfu) << what;
    EXPECT_TRUE(e.fits) << what;
    double worst = 0;
    for (const auto& s : e.stages) worst = std::max(worst, s.memory.total_bytes());
    EXPECT_NEAR(row.memory_gib, worst / (1024.0 * 1024 * 1024), 1e-9 * row.memory_gib) << what;
    EXPECT_NEAR(row.time_to_train_h, spec.tokens_to_train / e.tokens_per_s / 3600,
                1e-6 * row.time_to_train_h);
    EXPECT_NEAR(row.gpu_hours, row.time_to_train_h * static_cast<double>(row.variant.cfg.gpus()),
                1e-9 * row.gpu_hours);
  }
}

// A configuration's energy is the sum of its parts (GPUs, the rest of the nodes, the facility's
// overhead), its operational carbon that energy times its region's intensity, and the region
// and PUE axes change only what depends on them.
TEST(Sweep, EnergyIsTheSumOfItsPartsAndCarbonFollowsTheRegion) {
  const auto& db = lumos::cost::embedded_db();
  SweepSpec spec;
  spec.model = lumos::model::preset("gpt3-15b");
  spec.model.layers = 8;
  spec.total_gpus = {16};
  spec.tp = {2};
  spec.pp = {2};
  spec.gbs = {16};
  spec.gpus = {"h100", "a100"};
  spec.regions = {"se", "pl"};
  spec.pue = {1.1, 1.5};
  const SweepResult r = run_sweep(spec, db, {});
  ASSERT_EQ(r.rows.size(), 8u);
  EXPECT_EQ(r.stats.graphs, 1u) << "regions and PUEs share the graph";
  for (const SweepRow& row : r.rows) {
    ASSERT_TRUE(row.feasible) << row.reason;
    EXPECT_NEAR(row.energy_kwh, row.gpu_energy_kwh + row.node_energy_kwh + row.facility_energy_kwh,
                1e-9 * row.energy_kwh);
    EXPECT_NEAR(row.facility_energy_kwh,
                (row.gpu_energy_kwh + row.node_energy_kwh) * (row.variant.pue - 1),
                1e-9 * row.energy_kwh);
    EXPECT_EQ(row.grid_g_per_kwh, db.carbon.region(row.variant.region).g_per_kwh);
    EXPECT_NEAR(row.operational_kg, row.energy_kwh * row.grid_g_per_kwh / 1000,
                1e-9 * row.operational_kg);
    EXPECT_NEAR(row.sci_kg, row.operational_kg + row.embodied_kg, 1e-9 * row.sci_kg);
    const auto& gpu = db.gpu(row.variant.gpu);
    EXPECT_GT(row.gpu_power_w, gpu.idle_w);
    EXPECT_LE(row.gpu_power_w, gpu.tdp_w);
  }
  // Rows: gpu outer, then region, then PUE. Same GPU, same GPU energy whatever the site.
  EXPECT_EQ(r.rows[0].gpu_energy_kwh, r.rows[3].gpu_energy_kwh);
  EXPECT_LT(r.rows[0].energy_kwh, r.rows[1].energy_kwh) << "PUE 1.1 < 1.5";
  EXPECT_LT(r.rows[0].operational_kg * 10, r.rows[2].operational_kg) << "Sweden against Poland";
  EXPECT_EQ(r.rows[0].embodied_kg, r.rows[2].embodied_kg) << "embodied does not follow the grid";
}

// GPUs per node and NVLink bandwidth are hardware axes like the NIC's: every row equals
// `lumos estimate` with the same overrides, fewer GPUs per node push tensor parallelism across
// nodes, and slower NVLink slows it down.
TEST(Sweep, GpusPerNodeAndNvlinkAxesEqualEstimatesAndMoveStepTimes) {
  const auto& db = lumos::cost::embedded_db();
  SweepSpec spec;
  spec.model = lumos::model::preset("gpt3-15b");
  spec.model.layers = 8;
  spec.total_gpus = {16};
  spec.tp = {8};
  spec.pp = {2};
  spec.gbs = {16};
  spec.gpus = {"h100"};
  spec.gpus_per_node = {0, 4};
  spec.nvlink_gbps = {0, 100};
  const SweepResult r = run_sweep(spec, db, {});
  ASSERT_EQ(r.rows.size(), 4u);
  for (const SweepRow& row : r.rows) {
    ASSERT_TRUE(row.feasible) << row.reason;
    const auto e = lumos::test::estimate_of(spec, row);
    EXPECT_NEAR(row.step_time_us, e.step_time_us, 1e-6 * e.step_time_us) << row.variant.index;
    EXPECT_EQ(row.variant.cfg.gpus_per_node, row.variant.gpus_per_node);
  }
  // Rows: (8 per node, 450 GB/s), (8, 100), (4, 450), (4, 100).
  EXPECT_EQ(r.rows[0].variant.gpus_per_node, 8);
  EXPECT_EQ(r.rows[0].variant.nvlink_gbps, 450);
  EXPECT_LT(r.rows[0].step_time_us, r.rows[1].step_time_us) << "slower NVLink, slower TP";
  EXPECT_LT(r.rows[0].step_time_us, r.rows[2].step_time_us) << "TP 8 across two nodes";
  EXPECT_GT(r.stats.groups, 1u) << "GPUs per node shape the graph";
}

TEST(Sweep, TheFrontOfARealSweepIsExactlyItsNonDominatedFeasibleRows) {
  const SweepResult r = run_sweep(small_spec(), lumos::cost::embedded_db(), {});
  const std::vector<std::string> names = {"time_to_train_h", "gpu_hours", "energy_kwh"};
  const std::vector<size_t> front =
      lumos::sweep::pareto_rows(lumos::report::sweep_view(r, "sweep"), names);
  ASSERT_FALSE(front.empty());
  // The same front as over the CSV written and read back (`lumos pareto`).
  std::istringstream in(csv_of(r));
  const lumos::CsvTable t = lumos::parse_csv(in, "sweep");
  EXPECT_EQ(lumos::sweep::pareto_rows(lumos::csv_view(t), names), front);
  std::vector<bool> on(r.rows.size(), false);
  for (size_t i : front) on[i] = true;
  // The objectives as the CSV prints them (9 significant digits).
  std::vector<std::array<double, 3>> obj(r.rows.size());
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SweepRow& w = r.rows[i];
    const double raw[3] = {w.time_to_train_h, w.gpu_hours, w.energy_kwh};
    for (size_t k = 0; k < 3; ++k) obj[i][k] = std::stod(lumos::strprintf("%.9g", raw[k]));
  }
  for (size_t i = 0; i < r.rows.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < r.rows.size() && !dominated; ++j) {
      if (!r.rows[j].feasible) continue;
      bool no_worse = true, better = false;
      for (size_t k = 0; k < 3; ++k) {
        no_worse = no_worse && obj[j][k] <= obj[i][k];
        better = better || obj[j][k] < obj[i][k];
      }
      dominated = no_worse && better;
    }
    EXPECT_EQ(on[i], r.rows[i].feasible && !dominated) << "row " << i;
  }
}

TEST(Sweep, ASpeedUpEqualsKernelsPricedThatMuchFaster) {
  const auto& db = lumos::cost::embedded_db();
  SweepSpec spec = small_spec();
  spec.fsdp = {0};
  spec.dtypes = {lumos::cost::Dtype::kBf16};
  spec.nic_gbps = {0};
  spec.speed = lumos::whatif::parse_speed_axes("compute=2;comm=1,4", "--speed");
  const SweepResult fast = run_sweep(spec, db, {});
  // The same configurations with every compute kernel (the optimizer step included) priced at
  // half its time, or every communication kernel at a quarter.
  spec.speed.clear();
  for (const double comm : {1.0, 4.0}) {
    spec.adjust_costs = [comm](lumos::model::StepCosts& k) {
      for (auto* list : {&k.layer_fwd, &k.layer_bwd, &k.layer_recompute, &k.embed_fwd, &k.embed_bwd,
                         &k.head_fwd, &k.head_bwd})
        for (auto& op : *list) op.dur_us /= op.comm() ? comm : 2.0;
      k.p2p.dur_us /= comm;
      k.embedding_allreduce.dur_us /= comm;
      k.dp_comm_scale /= comm;
      k.optimizer_scale /= 2.0;
    };
    const SweepResult priced = run_sweep(spec, db, {});
    size_t compared = 0;
    for (const SweepRow& row : fast.rows) {
      if (!row.estimated || row.variant.speed[static_cast<int>(lumos::graph::NodeClass::kComm)] !=
                                static_cast<float>(comm))
        continue;
      // fast has two speed variants per configuration: index / 2 is the configuration.
      const SweepRow& other = priced.rows[row.variant.index / 2];
      EXPECT_NEAR(row.step_time_us, other.step_time_us, 1e-9 * other.step_time_us)
          << row.variant.speed_label << " index " << row.variant.index;
      ++compared;
    }
    EXPECT_GT(compared, 20u);
  }
  EXPECT_EQ(fast.rows[0].variant.speed_label, "compute=2;comm=1");
  EXPECT_EQ(fast.rows[1].variant.speed_label, "compute=2;comm=4");
}

TEST(Sweep, ShardsPartitionTheSweepExactly) {
  const auto& db = lumos::cost::embedded_db();
  SweepSpec spec = small_spec();
  spec.recompute = {lumos::model::Recompute::kNone};
  const SweepResult whole = run_sweep(spec, db, {});
  std::vector<SweepRow> merged;
  std::set<uint64_t> seen;
  for (uint32_t i = 0; i < 3; ++i) {
    SweepOptions opt;
    opt.shard = i, opt.shards = 3;
    const SweepResult part = run_sweep(spec, db, opt);
    EXPECT_GT(part.rows.size(), 0u);
    for (const auto& row : part.rows) {
      EXPECT_TRUE(seen.insert(row.variant.index).second) << "a configuration in two shards";
      merged.push_back(row);
    }
  }
  std::sort(merged.begin(), merged.end(),
            [](const SweepRow& a, const SweepRow& b) { return a.variant.index < b.variant.index; });
  SweepResult m;
  m.rows = merged;
  EXPECT_EQ(csv_of(m), csv_of(whole));
}

TEST(Sweep, InfeasibleConfigurationsKeepTheirReason) {
  SweepSpec spec = small_spec();
  spec.model = lumos::model::preset("gpt3-175b");
  spec.total_gpus = {8};
  spec.tp = {8, 3};
  spec.pp = {1};
  spec.mbs = {1};
  spec.recompute = {lumos::model::Recompute::kNone};
  spec.gpus = {"h100"};
  spec.topologies = {""};
  spec.nic_gbps = {0};
  spec.fsdp = {0};
  spec.dtypes = {lumos::cost::Dtype::kBf16};
  const SweepResult r = run_sweep(spec, lumos::cost::embedded_db(), {});
  ASSERT_EQ(r.rows.size(), 1u);  // tp 3 does not divide 8 GPUs: not a configuration of 8
  EXPECT_FALSE(r.rows[0].feasible);
  EXPECT_FALSE(r.rows[0].estimated);
  EXPECT_NE(r.rows[0].reason.find("does not fit"), std::string::npos) << r.rows[0].reason;
  spec.total_gpus = {24};
  spec.tp = {3};
  const SweepResult bad = run_sweep(spec, lumos::cost::embedded_db(), {});
  ASSERT_EQ(bad.rows.size(), 1u);
  EXPECT_NE(bad.rows[0].reason.find("invalid layout"), std::string::npos) << bad.rows[0].reason;
}

TEST(SweepAxes, ListsRangesAndErrors) {
  EXPECT_EQ(parse_int_axis("1,2,4", "--tp"), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(parse_int_axis("64..1024", "--gpus"), (std::vector<int64_t>{64, 128, 256, 512, 1024}));
  EXPECT_EQ(parse_int_axis("1:7:3,16", "--pp"), (std::vector<int64_t>{1, 4, 7, 16}));
  for (const char* bad : {"", "0", "1,,2", "8..4", "1:2", "x", "-1", "1:100000:1"})
    EXPECT_THROW(parse_int_axis(bad, "--tp"), lumos::InputError) << bad;
  EXPECT_THROW(parse_name_axis("h100,", "--gpu"), lumos::InputError);
  EXPECT_EQ(parse_bandwidth_axis("400Gbps,25GB/s", "--nic-bandwidth"),
            (std::vector<double>{50, 25}));
  EXPECT_THROW(parse_bandwidth_axis("400", "--nic-bandwidth"), lumos::InputError);
  SweepSpec s = small_spec();
  s.gpus = {"nope"};
  EXPECT_THROW(run_sweep(s, lumos::cost::embedded_db(), {}), lumos::InputError);
  s = small_spec();
  s.total_gpus = {7};
  s.tp = {2};
  s.pp = {2};
  EXPECT_THROW(run_sweep(s, lumos::cost::embedded_db(), {}), lumos::InputError);
  SweepOptions opt;
  opt.shard = 3, opt.shards = 3;
  EXPECT_THROW(run_sweep(small_spec(), lumos::cost::embedded_db(), opt), lumos::InputError);
}

}  // namespace
