// Structural what-ifs of a traced job (Lumos §4) on jobs written by `lumos generate`: the edited
// job agrees with `lumos estimate` of the edited configuration, the traced configuration
// reproduces the trace, the PP edit rebuilds Lumos's Figure 4 order, and an edit the trace or
// the model cannot support is refused in one line.
#include "estimate/trace_structural.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.hpp"
#include "generated_job.hpp"
#include "graph/load_input.hpp"

using lumos::estimate::run_structural_whatif;
using lumos::estimate::StructuralEdit;
using lumos::estimate::StructuralRequest;
using lumos::testing::JobConfig;

namespace {

JobConfig job(const char* model, int tp, int pp, int dp, int v, int64_t gbs, int64_t layers) {
  JobConfig c;
  c.model = model, c.tp = tp, c.pp = pp, c.dp = dp, c.interleave = v, c.gbs = gbs;
  c.layers = layers;
  return c;
}

struct EditCase {
  const char* name;
  JobConfig traced, edited;
  StructuralEdit edit;
};

void PrintTo(const EditCase& c, std::ostream* os) {
  *os << c.name;
}

lumos::estimate::StructuralAnswer edit_job(const JobConfig& traced, const StructuralEdit& e,
                                           const lumos::testing::TempDir& tmp) {
  lumos::testing::write_job(traced, tmp.file("job"));
  StructuralRequest req;
  req.model = lumos::model::preset(traced.model);  // its layer count comes from the trace
  req.edit = e;
  return run_structural_whatif(lumos::graph::load_job(tmp.file("job")), req,
                               lumos::cost::embedded_db());
}

template <typename F>
EditCase edit_case(const char* name, JobConfig traced, F change) {
  EditCase c{name, traced, traced, {}};
  change(c.edited, c.edit);
  return c;
}

}  // namespace

class StructuralEdits : public ::testing::TestWithParam<EditCase> {};

TEST_P(StructuralEdits, AgreeWithTheEstimateOfTheEditedConfiguration) {
  const EditCase& k = GetParam();
  lumos::testing::TempDir tmp;
  const auto a = edit_job(k.traced, k.edit, tmp);
  // The traced configuration, rebuilt and calibrated, is the traced job.
  EXPECT_NEAR(a.calibrated_traced_us, a.trace_replay_us, 1e-4 * a.trace_replay_us);
  EXPECT_EQ(a.traced.cfg.pp, k.traced.pp);
  EXPECT_EQ(a.traced.cfg.interleave, k.traced.interleave);
  EXPECT_EQ(a.traced.cfg.gbs, k.traced.gbs);
  EXPECT_EQ(a.traced.model.layers, k.traced.layers);
  const double expected = lumos::testing::estimate_us(k.edited);
  const double got = a.edited.estimate.step_time_us;
  std::printf("%-36s traced %10.1f us  whatif %10.1f us  estimate %10.1f us  %+.3f%%\n", k.name,
              a.trace_replay_us, got, expected, (got / expected - 1) * 100);
  EXPECT_NEAR(got, expected, 0.03 * expected);
  EXPECT_FALSE(a.edits.empty());
}

INSTANTIATE_TEST_SUITE_P(
    GeneratedJobs, StructuralEdits,
    ::testing::Values(
        edit_case("gpt 1F1B pp x2", job("gpt3-15b", 2, 2, 2, 1, 8, 8),
                  [](JobConfig& b, StructuralEdit& e) { b.pp = 4, e.pp = 4; }),
        edit_case("gpt 1F1B pp /2", job("gpt3-15b", 2, 4, 1, 1, 8, 8),
                  [](JobConfig& b, StructuralEdit& e) { b.pp = 2, e.pp = 2; }),
        edit_case("gpt interleaved pp x2", job("gpt3-15b", 2, 2, 1, 2, 8, 8),
                  [](JobConfig& b, StructuralEdit& e) { b.pp = 4, e.pp = 4; }),
        edit_case("gpt interleaved pp /2", job("gpt3-15b", 1, 4, 1, 2, 8, 16),
                  [](JobConfig& b, StructuralEdit& e) { b.pp = 2, e.pp = 2; }),
        edit_case("llama 1F1B layers x2", job("llama3-8b", 2, 2, 1, 1, 4, 8),
                  [](JobConfig& b, StructuralEdit& e) { b.layers = 16, e.layers = 16; }),
        edit_case("llama interleaved layers /2", job("llama3-8b", 1, 2, 2, 2, 8, 16),
                  [](JobConfig& b, StructuralEdit& e) { b.layers = 8, e.layers = 8; }),
        edit_case("gpt hidden and ffn x1.5", job("gpt3-15b", 2, 2, 1, 1, 4, 4),
                  [](JobConfig& b, StructuralEdit& e) {
                    b.hidden = 9216, b.ffn = 18432, e.hidden = 9216, e.ffn = 18432;
                  }),
        edit_case("llama hidden and ffn x1.5", job("llama3-8b", 2, 1, 1, 1, 2, 4),
                  [](JobConfig& b, StructuralEdit& e) {
                    b.hidden = 6144, b.ffn = 21504, e.hidden = 6144, e.ffn = 21504;
                  }),
        edit_case("gpt tp x2", job("gpt3-15b", 2, 2, 1, 1, 4, 8),
                  [](JobConfig& b, StructuralEdit& e) { b.tp = 4, e.tp = 4; }),
        edit_case("llama tp /2", job("llama3-8b", 4, 1, 1, 1, 4, 4),
                  [](JobConfig& b, StructuralEdit& e) { b.tp = 2, e.tp = 2; }),
        edit_case("gpt mbs x2", job("gpt3-15b", 2, 2, 1, 1, 8, 8),
                  [](JobConfig& b, StructuralEdit& e) { b.mbs = 2, e.mbs = 2; }),
        edit_case("llama interleaved mbs x2", job("llama3-8b", 1, 2, 1, 2, 8, 8),
                  [](JobConfig& b, StructuralEdit& e) { b.mbs = 2, e.mbs = 2; }),
        edit_case("gpt pp x2 and dp x2 at once", job("gpt3-15b", 2, 2, 2, 1, 8, 8),
                  [](JobConfig& b, StructuralEdit& e) {
                    b.pp = 4, b.dp = 4, b.gbs = 16, e.pp = 4, e.dp = 4;
                  })),
    [](const auto& info) {
      std::string s = info.param.name;
      for (char& ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

namespace {

// "F1 F2 B1 ...": the first stage's passes in replayed order (each of its forward passes starts
// with the embedding, each backward pass ends with it).
std::string first_stage_order(const lumos::estimate::EstimateRun& run) {
  const auto& g = run.step.graph;
  std::vector<lumos::graph::NodeId> nodes;
  for (lumos::graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (run.step.meta_of(v).stage == 0 && g.kind[v] == lumos::graph::NodeKind::kKernel &&
        g.names[g.name[v]].rfind("embedding_", 0) == 0)
      nodes.push_back(v);
  std::sort(nodes.begin(), nodes.end(),
            [&](auto a, auto b) { return run.replay.start_us[a] < run.replay.start_us[b]; });
  std::string out;
  int f = 0, b = 0;
  for (auto v : nodes) {
    const bool fwd = g.names[g.name[v]].find("fwd") != std::string::npos;
    out += (out.empty() ? "" : " ") + (fwd ? "F" + std::to_string(++f) : "B" + std::to_string(++b));
  }
  return out;
}

}  // namespace

TEST(StructuralEdits, PipelineEditRebuildsLumosFigureFourOrder) {
  // Lumos Figure 4: TP 2 x PP 2 with 4 micro-batches on rank 0, then PP doubled with 8.
  lumos::testing::TempDir tmp;
  StructuralEdit e;
  e.pp = 4, e.gbs = 8;
  const auto a = edit_job(job("gpt3-15b", 2, 2, 1, 1, 4, 8), e, tmp);
  StructuralEdit none;
  lumos::testing::TempDir tmp2;
  const auto same = edit_job(job("gpt3-15b", 2, 2, 1, 1, 4, 8), none, tmp2);
  EXPECT_EQ(first_stage_order(same.edited), "F1 F2 B1 F3 B2 F4 B3 B4");
  EXPECT_EQ(first_stage_order(a.edited), "F1 F2 F3 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 B6 B7 B8");
}

TEST(StructuralEdits, RefusalsNameWhatIsMissingInOneLine) {
  auto refused = [](const std::function<void()>& f, const std::string& names) {
    try {
      f();
      ADD_FAILURE() << "expected an InputError naming " << names;
    } catch (const lumos::InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(names), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  lumos::testing::TempDir tmp;
  lumos::testing::write_job(job("gpt3-15b", 2, 2, 1, 1, 4, 8), tmp.file("job"));
  const auto in = lumos::graph::load_job(tmp.file("job"));
  const auto& db = lumos::cost::embedded_db();
  StructuralRequest req;
  req.edit.pp = 4;
  refused([&] { run_structural_whatif(in, req, db); }, "needs the traced model's dimensions");
  req.model = lumos::model::preset("llama3-8b");  // not the model that ran
  refused([&] { run_structural_whatif(in, req, db); }, "is the model right?");
  req.model = lumos::model::preset("gpt3-15b");
  req.edit.pp = 3;  // 8 layers over 3 stages
  refused([&] { run_structural_whatif(in, req, db); }, "layers");
  req.edit.pp.reset();
  req.edit.tp = 5;  // does not divide 48 heads
  refused([&] { run_structural_whatif(in, req, db); }, "heads");
  // DLRM: no layers to rebuild.
  if (std::filesystem::exists(lumos::testing::trace_dir())) {
    req.edit = {};
    req.edit.layers = 4;
    req.gpu = "a100";
    refused(
        [&] {
          run_structural_whatif(
              lumos::graph::load_job(lumos::testing::trace_dir() + "/param/dlrm_kineto"), req, db);
        },
        "no repeating layer pattern");
  }
}

TEST(StructuralEdits, KernelsTheTraceRanSlowerStaySlowerInTheEditedJob) {
  // The traced GEMMs took 25% longer than the model prices them: the edited job's GEMMs do too,
  // and the calibrated traced configuration still reproduces the trace.
  lumos::testing::TempDir tmp;
  const JobConfig traced = job("gpt3-15b", 2, 2, 1, 1, 4, 8);
  lumos::testing::write_job(traced, tmp.file("job"));
  auto in = lumos::graph::load_job(tmp.file("job"));
  const auto& db = lumos::cost::embedded_db();
  for (lumos::graph::NodeId v = 1; v < in.graph.num_nodes(); ++v)
    if (in.graph.names[in.graph.name[v]].find("gemm") != std::string::npos)
      in.graph.dur_us[v] *= 1.25;
  StructuralRequest req;
  req.model = lumos::model::preset("gpt3-15b");
  req.edit.pp = 4;
  const auto a = run_structural_whatif(in, req, db);
  EXPECT_NEAR(a.calibration.factor("gemm"), 1.25, 1e-6);  // traces keep nanoseconds
  EXPECT_NEAR(a.calibrated_traced_us, a.trace_replay_us, 1e-4 * a.trace_replay_us);
  JobConfig b = traced;
  b.pp = 4;
  const auto plain = lumos::estimate::run_estimate(lumos::testing::job_request(b), db);
  auto gemm_us = [](const lumos::estimate::Estimate& e) {
    for (const auto& [cls, us] : e.kernel_time_us)
      if (cls == "gemm") return us;
    return 0.0;
  };
  EXPECT_NEAR(gemm_us(a.edited.estimate), 1.25 * gemm_us(plain.estimate),
              1e-6 * gemm_us(plain.estimate));
  EXPECT_GT(a.edited.estimate.step_time_us, plain.estimate.step_time_us);
}
