// What `lumos cost classify` computes (trace::classify_trace) against the classifier's own report,
// and the collective topology with NIC overrides (cost::collective_topology).
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "cost/collective_topology.hpp"
#include "support/test_util.hpp"
#include "trace/classified_kernels.hpp"
#include "trace/demo_trace.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_classification.hpp"

using namespace lumos::cost;
using namespace lumos::trace;

namespace {

// The classification's own invariants, and its agreement with cost_report.
void expect_consistent(const KernelsDb& db, const lumos::trace::EventTable& t,
                       const TraceClassification& c) {
  const TraceCostReport r = cost_report(db, t);
  EXPECT_EQ(c.trace, t.path);
  EXPECT_EQ(c.gpu, r.gpu);
  EXPECT_DOUBLE_EQ(c.gpu_time_us, r.gpu_time_us);
  EXPECT_DOUBLE_EQ(c.classified_fraction, r.classified_fraction);
  ASSERT_EQ(c.classes.size(), r.time_by_class_us.size());
  double sum = 0;
  for (const ClassTime& k : c.classes) {
    EXPECT_DOUBLE_EQ(k.time_us, r.time_by_class_us.at(k.kernel_class));
    EXPECT_DOUBLE_EQ(k.percent_of_gpu_time, 100 * k.time_us / c.gpu_time_us);
    sum += k.time_us;
  }
  EXPECT_NEAR(sum, c.gpu_time_us, 1e-6 * c.gpu_time_us);
  ASSERT_EQ(c.errors.size(), r.rel_errors.size());
  for (const ModelError& m : c.errors) {
    EXPECT_EQ(m.kernels, r.rel_errors.at(m.kernel_class).size());
    EXPECT_DOUBLE_EQ(m.median_abs_error, lumos::median(r.rel_errors.at(m.kernel_class)));
  }
  size_t collectives = 0;
  for (const ClassifiedKernel& k : r.kernels) collectives += k.collective.has_value();
  if (c.gpu.empty()) {
    EXPECT_TRUE(c.kernels.empty());
    EXPECT_TRUE(c.errors.empty());
    return;
  }
  size_t listed_collectives = 0;
  for (const PricedKernel& k : c.kernels) {
    EXPECT_NE(k.gemm.has_value(), k.collective.has_value());
    EXPECT_GT(k.model_us, 0.0);
    EXPECT_GE(k.measured_us, 0.0);
    EXPECT_EQ(k.name.empty(), k.collective.has_value());
    listed_collectives += k.collective.has_value();
  }
  EXPECT_EQ(listed_collectives, collectives);
}

}  // namespace

TEST(TraceClassification, DemoTraceIsClassifiedWithoutPredictionsForAnUnknownGpu) {
  const std::string json = lumos::trace::demo_trace_json();
  const auto t = lumos::trace::parse_trace_json(json.data(), json.size(), "demo");
  const KernelsDb& db = embedded_db();
  const TraceClassification c = classify_trace(db, t);
  EXPECT_TRUE(c.gpu.empty());
  EXPECT_GT(c.gpu_time_us, 0.0);
  ASSERT_FALSE(c.classes.empty());
  bool gemm = false;
  for (const ClassTime& k : c.classes) gemm |= k.kernel_class == "gemm";
  EXPECT_TRUE(gemm);
  expect_consistent(db, t, c);
}

TEST(TraceClassification, AgreesWithTheCostReportOnEverySharedTrace) {
  LUMOS_REQUIRE_TRACES();
  const KernelsDb& db = embedded_db();
  size_t priced = 0;
  for (const auto& path : lumos::testing::shared_traces()) {
    SCOPED_TRACE(path);
    const auto t = lumos::trace::load_trace(path);
    const TraceClassification c = classify_trace(db, t);
    expect_consistent(db, t, c);
    priced += c.kernels.size();
  }
  EXPECT_GT(priced, 0u);  // the A100 traces have GEMMs and NCCL kernels the model prices
}

TEST(CollectiveTopology, DefaultNamedAndOverridden) {
  const KernelsDb& db = embedded_db();
  const GpuSpec& h100 = db.gpu("h100");
  const Topology& dflt = db.default_topology_for(h100);
  EXPECT_EQ(collective_topology(db, h100, std::nullopt, {}).name, dflt.name);
  const Topology& other = db.default_topology_for(db.gpu("a100"));
  EXPECT_EQ(collective_topology(db, h100, other.name, {}).name, other.name);
  const Topology t = collective_topology(db, h100, std::nullopt, {100.0, 2, 0.5});
  EXPECT_EQ(t.name, dflt.name);
  EXPECT_DOUBLE_EQ(t.nic_gbps, 100.0);
  EXPECT_EQ(t.nics_per_gpu, 2);
  EXPECT_DOUBLE_EQ(t.nic_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(t.nvlink_efficiency, dflt.nvlink_efficiency);  // untouched
}

TEST(CollectiveTopology, RejectsImpossibleNicFiguresAndUnknownNames) {
  const KernelsDb& db = embedded_db();
  const GpuSpec& gpu = db.gpu("h100");
  EXPECT_THROW(collective_topology(db, gpu, std::nullopt, {0.0, {}, {}}), lumos::InputError);
  EXPECT_THROW(collective_topology(db, gpu, std::nullopt, {{}, 0, {}}), lumos::InputError);
  EXPECT_THROW(collective_topology(db, gpu, std::nullopt, {{}, {}, 1.5}), lumos::InputError);
  EXPECT_THROW(collective_topology(db, gpu, std::nullopt, {{}, {}, 0.0}), lumos::InputError);
  EXPECT_THROW(collective_topology(db, gpu, std::string("no-such-topology"), {}),
               lumos::InputError);
  EXPECT_NO_THROW(collective_topology(db, gpu, std::nullopt, {{}, {}, 1.0}));
}
