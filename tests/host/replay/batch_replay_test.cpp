// The batch replay (CPU backend) against the reference replay: identity variants on every shared
// trace, random variants on thousands of random DAGs; the Pareto front against brute force.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <random>

#include "common/error.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "graph/flatten.hpp"
#include "graph/graph_builder.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/batch_replay.hpp"
#include "replay/pareto.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "support/random_variants.hpp"
#include "support/test_util.hpp"
#include "trace/demo_trace.hpp"
#include "trace/kineto_loader.hpp"
#include "whatif/gemm_pricing.hpp"
#include "whatif/gpu_variants.hpp"

using namespace lumos::replay;
using lumos::testing::add_random_slots;
using lumos::testing::random_variants;
using lumos::whatif::comm_factor_for_group;
using lumos::whatif::gemm_pricing;
using lumos::whatif::variants_from_gpus;

namespace {

void expect_same(const BatchResult& a, const BatchResult& b, const std::string& what) {
  ASSERT_EQ(a.variants, b.variants) << what;
  for (uint32_t v = 0; v < a.variants; ++v) {
    const double scale = std::max(1.0, std::fabs(b.makespan_us[v]));
    ASSERT_NEAR(a.makespan_us[v], b.makespan_us[v], 1e-9 * scale) << what << " variant " << v;
    for (size_t k = 0; k < a.step_us.size(); ++k)
      ASSERT_NEAR(a.step_us[k][v], b.step_us[k][v], 1e-9 * scale)
          << what << " step " << k << " variant " << v;
    for (int c = 0; c < kNumNodeClasses; ++c)
      ASSERT_NEAR(a.busy_us[c][v], b.busy_us[c][v], 1e-9 * std::max(1.0, b.busy_us[c][v])) << what;
    // Every resource's busy time adds up to the classes' (virtual nodes have no resource).
    double by_res = 0, by_cls = 0;
    for (const auto& res : a.resource_busy_us) by_res += res[v];
    for (int c = 0; c < kNumNodeClasses; ++c) by_cls += a.busy_us[c][v];
    ASSERT_NEAR(by_res, by_cls, 1e-6 * std::max(1.0, by_cls)) << what;
  }
}

}  // namespace

TEST(BatchReplay, IdentityVariantsEqualTheReferenceOnEverySharedTrace) {
  LUMOS_REQUIRE_TRACES();
  for (const auto& path : lumos::testing::shared_traces()) {
    const auto t = lumos::trace::load_trace(path);
    const auto g = lumos::graph::build_graph(t).graph;
    const VariantBatch id = VariantBatch::identity(3);
    const BatchResult cpu = batch_replay_cpu(g, id);
    expect_same(cpu, batch_replay_reference(g, id), path);
    // Identity: the measured step times come back.
    const auto ref = step_times(g, reference_replay(g));
    for (size_t k = 0; k < ref.size(); ++k)
      EXPECT_NEAR(cpu.step_us[k][2], ref[k].replayed_us, 1e-6 * std::max(1.0, ref[k].replayed_us))
          << path;
  }
}

TEST(BatchReplay, RandomVariantsOnRealTracesEqualTheReference) {
  LUMOS_REQUIRE_TRACES();
  std::mt19937 rng(11);
  for (const char* rel :
       {"/kineto/resnet50_v100_legacy.pt.trace.json.gz",
        "/hta/nccl_parser_config/nccl_data.json.gz", "/param/dlrm_kineto/rank3.pt.trace.json.gz",
        "/tracelens/b200_eager_trace.json.gz"}) {
    const auto t = lumos::trace::load_trace(lumos::testing::trace_dir() + rel);
    const auto g = lumos::graph::build_graph(t).graph;
    const VariantBatch b = random_variants(70, rng);  // more than one 64-wide tile
    expect_same(batch_replay_cpu(g, b), batch_replay_reference(g, b), rel);
  }
}

TEST(BatchReplay, RandomDagsAndVariantsEqualTheReference) {
  std::mt19937 rng(20261129);
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng() % 300);
    const auto g =
        lumos::graph::synthetic_graph(nodes, seed, 1 + static_cast<uint32_t>(rng() % 8), 0.3);
    VariantBatch b = random_variants(1 + static_cast<uint32_t>(rng() % 9), rng);
    if (seed % 2 == 0) add_random_slots(b, g, rng);  // half of them with model slots
    const BatchResult cpu = batch_replay_cpu(g, b, 4, 2);
    const BatchResult ref = batch_replay_reference(g, b);
    expect_same(cpu, ref, "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
    // The critical path's composition agrees with the reference's backtrack up to ties.
    for (uint32_t v = 0; v < b.count; ++v) {
      EXPECT_LE(cpu.cp_compute_us[v] + cpu.cp_comm_us[v], cpu.makespan_us[v] * (1 + 1e-5) + 1e-3);
      EXPECT_NEAR(cpu.cp_compute_us[v] + cpu.cp_comm_us[v],
                  ref.cp_compute_us[v] + ref.cp_comm_us[v],
                  1e-3 * std::max(1.0, cpu.makespan_us[v]))
          << "seed " << seed;
    }
  }
}

// Finish times alone (what sweeps run) are the same bits as with the critical path: on random
// DAGs and variants, on a generated iteration, and with GEMMs repriced on a real trace.
TEST(BatchReplay, FinishTimesAloneEqualTheFullReplayBitForBit) {
  auto same = [](const BatchResult& full, const BatchResult& fast, const std::string& what) {
    ASSERT_EQ(full.variants, fast.variants) << what;
    for (uint32_t v = 0; v < full.variants; ++v) {
      ASSERT_EQ(full.makespan_us[v], fast.makespan_us[v])
          << what << " variant " << v << std::setprecision(17) << " " << full.makespan_us[v] << " "
          << fast.makespan_us[v];
      for (size_t k = 0; k < full.step_us.size(); ++k)
        ASSERT_EQ(full.step_us[k][v], fast.step_us[k][v]) << what << " step " << k;
      ASSERT_EQ(fast.cp_compute_us[v], 0.0f) << what;
      ASSERT_EQ(fast.cp_comm_us[v], 0.0f) << what;
    }
  };
  std::mt19937 rng(20261201);
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    const auto g = lumos::graph::synthetic_graph(2 + static_cast<uint32_t>(rng() % 300), seed,
                                                 1 + static_cast<uint32_t>(rng() % 8), 0.3);
    const VariantBatch b = random_variants(1 + static_cast<uint32_t>(rng() % 40), rng);
    const uint32_t tile = 1 + static_cast<uint32_t>(rng() % 16);
    same(batch_replay_cpu(g, b, tile, 2), batch_replay_cpu(g, b, tile, 2, nullptr, nullptr, false),
         "seed " + std::to_string(seed) + " tile " + std::to_string(tile));
    if (HasFatalFailure()) return;
  }
  LUMOS_REQUIRE_TRACES();
  const auto& db = lumos::cost::embedded_db();
  const auto t =
      lumos::trace::load_trace(lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz");
  const auto g = lumos::graph::build_graph(t).graph;
  const std::vector<std::string> gpus = {"b200", "h100", "a100", "h100-96gb-500w"};
  const VariantBatch b = variants_from_gpus(db, "b200", gpus);
  const GemmPricing p = gemm_pricing(g, t, db, "b200", gpus);
  same(batch_replay_cpu(g, b, 0, 0, &p), batch_replay_cpu(g, b, 0, 0, &p, nullptr, false),
       "priced trace");
}

TEST(BatchReplay, SpeedFactorsShortenOnlyTheirClass) {
  const auto g = lumos::graph::synthetic_graph(5000, 3);
  VariantBatch b = VariantBatch::identity(2);
  b.speed[static_cast<int>(lumos::graph::NodeClass::kComm)][1] = 2.0f;
  const BatchResult r = batch_replay_cpu(g, b);
  const int comm = static_cast<int>(lumos::graph::NodeClass::kComm),
            compute = static_cast<int>(lumos::graph::NodeClass::kCompute);
  EXPECT_DOUBLE_EQ(r.busy_us[comm][1], r.busy_us[comm][0] / 2);
  EXPECT_DOUBLE_EQ(r.busy_us[compute][1], r.busy_us[compute][0]);
  EXPECT_LE(r.makespan_us[1], r.makespan_us[0]);
}

TEST(BatchReplay, VariantsFromGpusScaleByPeakBandwidthAndNvlink) {
  const auto& db = lumos::cost::embedded_db();
  const VariantBatch b = variants_from_gpus(db, "h100", {"h100", "b200", "h200"});
  const int compute = static_cast<int>(lumos::graph::NodeClass::kCompute),
            memory = static_cast<int>(lumos::graph::NodeClass::kMemory);
  EXPECT_FLOAT_EQ(b.speed[compute][0], 1.0f);
  EXPECT_NEAR(b.speed[compute][1], 2250.0 / 989.0, 1e-5);
  EXPECT_NEAR(b.speed[memory][2], 4800.0 / 3350.0, 1e-5);
  EXPECT_EQ(b.labels[1], "b200");
  EXPECT_LT(comm_factor_for_group(db, "h100", 1e9, 8, 64, 8), 1.0f);  // a larger group is slower
  VariantBatch bad = VariantBatch::identity(1);
  bad.speed[0][0] = 0;
  EXPECT_THROW(bad.validate(), lumos::InputError);
}

namespace {

std::vector<uint32_t> brute_front(const std::vector<std::vector<double>>& o) {
  std::vector<uint32_t> out;
  const size_t n = o[0].size();
  for (size_t i = 0; i < n; ++i) {
    bool dominated = false;
    for (size_t j = 0; j < n && !dominated; ++j) {
      bool le = true, lt = false;
      for (const auto& k : o) le = le && k[j] <= k[i], lt = lt || k[j] < k[i];
      dominated = le && lt;
    }
    if (!dominated) out.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

}  // namespace

TEST(Pareto, MatchesBruteForceWithTiesAndDuplicates) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    const size_t n = 1 + rng() % 60;
    for (size_t dims : {2u, 3u}) {
      std::vector<std::vector<double>> o(dims, std::vector<double>(n));
      for (auto& k : o)
        for (auto& x : k) x = static_cast<double>(rng() % 7);  // small range: many ties
      EXPECT_EQ(pareto_front(o), brute_front(o)) << "trial " << trial << " dims " << dims;
    }
  }
  EXPECT_THROW(pareto_front({{1.0}}), lumos::InputError);
}

TEST(BatchReplay, GemmNodesArePricedPerGpuByTheCostModel) {
  LUMOS_REQUIRE_TRACES();
  const auto& db = lumos::cost::embedded_db();
  const auto t =
      lumos::trace::load_trace(lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz");
  const auto g = lumos::graph::build_graph(t).graph;
  const std::vector<std::string> gpus = {"b200", "h100", "a100", "h100"};
  VariantBatch b = variants_from_gpus(db, "b200", gpus);
  const GemmPricing p = gemm_pricing(g, t, db, "b200", gpus);
  ASSERT_GT(p.priced_nodes(), 50u);
  // CPU backend with pricing equals the reference replay with the same durations.
  const BatchResult cpu = batch_replay_cpu(g, b, 64, 0, &p);
  expect_same(cpu, batch_replay_reference(g, b, &p), "b200 priced");
  // On the traced GPU the ratio is 1: the traced step comes back.
  const BatchResult plain = batch_replay_cpu(g, VariantBatch::identity(1));
  EXPECT_NEAR(cpu.makespan_us[0], plain.makespan_us[0], 1e-6 * plain.makespan_us[0]);
  // One priced kernel's duration follows the model's ratio exactly.
  lumos::graph::NodeId node = 0, ratio_node = 0;
  for (lumos::graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (p.node_key[v] < 0) continue;
    if (p.dtype[p.node_key[v]] != lumos::replay::kRatioKey && !node) node = v;
    if (p.dtype[p.node_key[v]] == lumos::replay::kRatioKey && !ratio_node) ratio_node = v;
  }
  ASSERT_NE(node, 0u);
  ASSERT_NE(ratio_node, 0u);
  const int64_t* sh = &p.shape[4 * p.node_key[node]];
  const lumos::cost::GemmQuery q{sh[0], sh[1], sh[2], sh[3],
                                 static_cast<lumos::cost::Dtype>(p.dtype[p.node_key[node]])};
  const double ratio = lumos::cost::gemm_time(db, db.gpu("a100"), q, false).time_us /
                       lumos::cost::gemm_time(db, db.gpu("b200"), q, false).time_us;
  const BatchGemmView view = p.view();
  std::vector<uint8_t> cls(g.num_nodes());
  for (lumos::graph::NodeId v = 0; v < g.num_nodes(); ++v) cls[v] = static_cast<uint8_t>(g.cls[v]);
  BatchGraphView gv{g.num_nodes(),        g.pred_offset.data(), g.pred_index.data(),
                    g.pred_lag_us.data(), g.dur_us.data(),      cls.data()};
  EXPECT_NEAR(batch_node_duration(gv, &view, node, 2, 0, b.speed[cls[node]].data()),
              g.dur_us[node] * ratio, 1e-9 * g.dur_us[node] * ratio);
  EXPECT_GT(cpu.makespan_us[2], cpu.makespan_us[0]);  // an A100 is slower than the traced B200
  // The trace's other kernels: attention at the matrix rate, memory-bound ones at HBM bandwidth.
  const int bf16 = static_cast<int>(lumos::cost::Dtype::kBf16);
  const double matrix = *db.gpu("b200").peak_tflops[bf16] / *db.gpu("a100").peak_tflops[bf16];
  const double hbm = db.gpu("b200").hbm_gbps / db.gpu("a100").hbm_gbps;
  const double f =
      batch_node_duration(gv, &view, ratio_node, 2, 0, b.speed[cls[ratio_node]].data()) /
      g.dur_us[ratio_node];
  EXPECT_TRUE(std::fabs(f - matrix) < 1e-9 * matrix || std::fabs(f - hbm) < 1e-9 * hbm) << f;
}

// A pricing table whose indices leave their tables is refused before any engine follows them.
TEST(BatchReplay, GemmPricingWithIndicesOutOfRangeIsRefused) {
  const std::string json = lumos::trace::demo_trace_json();
  const auto g =
      lumos::graph::build_graph(lumos::trace::parse_trace_bytes(json.data(), json.size(), "demo"))
          .graph;
  const VariantBatch b = VariantBatch::identity(2);
  GemmPricing p;
  p.node_key.assign(g.num_nodes(), -1);
  p.shape = {1024, 1024, 1024, 1};
  p.dtype = {static_cast<uint8_t>(lumos::cost::Dtype::kBf16)};
  p.traced_us = {10.0};
  p.params.resize(lumos::cost::kNumDtypes);
  p.variant_gpu = {0, 0};
  EXPECT_NO_THROW(batch_replay_cpu(g, b, 64, 0, &p));
  p.node_key[1] = 1;  // one key exists
  EXPECT_THROW(batch_replay_cpu(g, b, 64, 0, &p), lumos::InputError);
  p.node_key[1] = 0;
  p.variant_gpu = {0, 1};  // one GPU's parameters exist
  EXPECT_THROW(batch_replay_reference(g, b, &p), lumos::InputError);
  p.variant_gpu = {0, 0};
  p.dtype = {200};
  EXPECT_THROW(batch_replay_cpu(g, b, 64, 0, &p), lumos::InputError);
  // A priced node whose GEMM has no parameters on its GPU, on every backend and the reference.
  p.dtype = {static_cast<uint8_t>(lumos::cost::Dtype::kBf16)};
  EXPECT_THROW(batch_replay_cpu(g, b, 64, 0, &p), lumos::InputError);
  EXPECT_THROW(batch_replay_reference(g, b, &p), lumos::InputError);
  // Ratio keys: their table sized keys x GPUs, every ratio and speed-up positive.
  p.dtype = {lumos::replay::kRatioKey};
  EXPECT_THROW(batch_replay_cpu(g, b, 64, 0, &p), lumos::InputError);  // no ratio table
  p.ratio = {2.0};
  EXPECT_NO_THROW(batch_replay_cpu(g, b, 64, 0, &p));
  p.ratio = {0.0};
  EXPECT_THROW(batch_replay_cpu(g, b, 64, 0, &p), lumos::InputError);
  p.ratio = {std::nan("")};
  EXPECT_THROW(batch_replay_reference(g, b, &p), lumos::InputError);
  p.ratio = {2.0};
  p.gpu_speed = {1.0, 2.0};  // one column only
  EXPECT_THROW(batch_replay_cpu(g, b, 64, 0, &p), lumos::InputError);
  p.gpu_speed = {-1.0};
  EXPECT_THROW(batch_replay_cpu(g, b, 64, 0, &p), lumos::InputError);
  p.gpu_speed = {2.0};
  const BatchResult same = batch_replay_cpu(g, b, 64, 0, &p);  // the node's factor 2 / 2 = 1
  p.node_key[1] = -1;
  EXPECT_DOUBLE_EQ(same.makespan_us[0], batch_replay_cpu(g, b, 64, 0, &p).makespan_us[0]);
}

TEST(BatchReplay, TilesAreSizedToTheWorkingSetNotToEveryRegister) {
  // 25 hot registers of 16 bytes in 512-variant tiles are 200 KiB: the widest tile fits.
  EXPECT_EQ(batch_cpu_tile(25, 1, 4096, 2), 512u);
  // 1,000 hot registers: 16 KB per variant, 64 variants in 1 MiB; twice as many without the path.
  EXPECT_EQ(batch_cpu_tile(1000, 1, 4096, 2), 64u);
  EXPECT_EQ(batch_cpu_tile(1000, 1, 4096, 2, false), 128u);
  // Every thread gets a tile: 1,024 variants over 4 threads.
  EXPECT_EQ(batch_cpu_tile(25, 1, 1024, 4), 256u);
  // Never below 8 variants, however large the working set.
  EXPECT_EQ(batch_cpu_tile(1u << 30, 1, 4096, 2), 8u);
}

// A step starts at its marker's start, not its finish: a generated iteration's markers are the
// first CPU call of each stage, which takes time (the programs had taken the finish).
TEST(BatchReplay, StepsStartWhereTheirMarkersStartOnAGeneratedIteration) {
  lumos::estimate::EstimateRequest r;
  r.model = lumos::model::preset("gpt3-15b");
  r.model.layers = 8;
  r.cfg.tp = 2, r.cfg.pp = 4, r.cfg.dp = 2, r.cfg.gbs = 16;
  const auto g = lumos::estimate::run_estimate(r, lumos::cost::embedded_db()).step.graph;
  ASSERT_GT(g.steps.size(), 1u);
  bool marker_takes_time = false;
  for (const auto& s : g.steps) marker_takes_time |= g.dur_us[s.marker] > 0;
  ASSERT_TRUE(marker_takes_time) << "the check needs a marker of non-zero duration";
  std::mt19937 rng(8);
  const VariantBatch b = random_variants(12, rng);
  expect_same(batch_replay_cpu(g, b, 4, 2), batch_replay_reference(g, b), "cpu");
  expect_same(batch_replay_device_body(g, b), batch_replay_reference(g, b), "device body");
}

// Every fan-in width takes its own pass on the CPU (none, one, two, more predecessors), and each
// follows the first predecessor (in the graph's predecessor order) reaching the latest start on
// exact ties, as the reference and the device kernel do. The sources start at 0; a 10 µs compute
// node, the last to finish, reads them all.
TEST(BatchReplay, EveryFanInFollowsTheFirstPredecessorReachingTheLatestStart) {
  using lumos::graph::NodeClass;
  constexpr NodeClass kCompute = NodeClass::kCompute, kComm = NodeClass::kComm,
                      kCpu = NodeClass::kCpu;
  struct Source {
    NodeClass cls;
    double dur_us, lag_us;  // lag: of its edge to the fan-in node
  };
  struct Case {
    std::vector<Source> sources;  // in the order the fan-in node reads them
    float compute_us, comm_us;    // the path's sums, the fan-in node's 10 µs included
  };
  const Case cases[] = {
      {{}, 10, 0},                                   // none
      {{{kCompute, 4, 0}}, 14, 0},                   // one
      {{{kCompute, 4, 0}, {kComm, 4, 0}}, 14, 0},    // two, tied: the first
      {{{kComm, 4, 0}, {kCompute, 4, 0}}, 10, 4},    // the other way round
      {{{kComm, 4, 0}, {kCompute, 4, 0.5}}, 14, 0},  // the second, by its lag (in neither sum)
      {{{kCpu, 4, 0}, {kCompute, 4, 0}, {kComm, 4, 0}}, 10, 0},  // three, tied: neither sum
      {{{kComm, 4, 0}, {kCpu, 4, 0}, {kCompute, 4, 0}}, 10, 4},  // three, tied
      {{{kCompute, 4, 0}, {kComm, 5, 0}, {kComm, 4, 0}, {kCpu, 4, 0}}, 10, 5},  // in the middle
      {{{kCompute, 4, 0}, {kComm, 4, 0}, {kCpu, 4, 0}, {kComm, 5, 0}}, 10, 5},  // the last
      {{{kComm, 5, 0}, {kCompute, 4, 0}, {kCpu, 4, 0}, {kCompute, 5, 0}},
       10,
       5},  // tied first, last
  };
  for (const Case& c : cases) {
    lumos::graph::Draft d;
    d.nodes.push_back({});  // origin
    const auto add = [&](NodeClass cls, double dur_us) {
      lumos::graph::DraftNode n;
      n.kind = lumos::graph::NodeKind::kKernel;
      n.cls = cls;
      n.resource = static_cast<uint32_t>(d.nodes.size() - 1);
      n.step = 0;
      n.dur_us = dur_us;
      d.nodes.push_back(n);
      return static_cast<uint32_t>(d.nodes.size() - 1);
    };
    std::vector<uint32_t> source;
    for (const Source& s : c.sources) {
      source.push_back(add(s.cls, s.dur_us));
      d.edges.push_back({0, source.back(), lumos::graph::EdgeKind::kIntraStream, 0.0});
    }
    const uint32_t x = add(kCompute, 10);
    if (c.sources.empty()) d.edges.push_back({0, x, lumos::graph::EdgeKind::kIntraStream, 0.0});
    for (size_t k = 0; k < c.sources.size(); ++k)
      d.edges.push_back({source[k], x, lumos::graph::EdgeKind::kLaunch, c.sources[k].lag_us});
    std::vector<lumos::graph::NodeId> id;
    lumos::graph::Graph g = lumos::graph::flatten(
        d, &id, [](uint32_t n) { return "node " + std::to_string(n); }, "fan-in");
    g.resources.resize(d.nodes.size() - 1);
    g.names = {"fan-in"};
    g.steps.push_back({"fan-in", 0, lumos::graph::kOrigin, 0.0});
    const uint32_t fan_in = g.pred_offset[id[x] + 1] - g.pred_offset[id[x]];
    ASSERT_EQ(fan_in, std::max<size_t>(1, c.sources.size()));
    for (size_t k = 0; k < c.sources.size(); ++k)  // the order the case means
      ASSERT_EQ(g.pred_index[g.pred_offset[id[x]] + k], id[source[k]]);
    // Every class twice as fast in the second variant: the ties stay ties (and the one lag, 0.5
    // µs, still decides).
    VariantBatch b = VariantBatch::identity(2);
    for (auto& s : b.speed) s[1] = 2.0f;
    const std::string what = "a fan-in of " + std::to_string(c.sources.size());
    for (const BatchResult& r :
         {batch_replay_cpu(g, b, 0, 1), batch_replay_cpu(g, b, 0, 1, nullptr, nullptr, true),
          batch_replay_device_body(g, b), batch_replay_reference(g, b)}) {
      for (uint32_t v = 0; v < 2; ++v) {
        const float scale = v == 0 ? 1.0f : 0.5f;
        EXPECT_EQ(r.cp_compute_us[v], c.compute_us * scale) << what << ", " << r.backend;
        EXPECT_EQ(r.cp_comm_us[v], c.comm_us * scale) << what << ", " << r.backend;
      }
    }
  }
}
