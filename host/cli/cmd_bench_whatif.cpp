// lumos bench whatif: how long trace what-ifs take on a large job. Writes a job with `lumos
// generate` into a temporary folder (about 100K graph nodes over its stages), loads it, then
// times a structural edit to a job four times larger (layers x4: recognition, calibration, the
// edited graph built and replayed) and a data-parallel edit of the traced graph, in one process.
#include <cxxopts.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/help_text.hpp"
#include "cli/quiet_option.hpp"
#include "cli/unexpected_args.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/generated_trace.hpp"
#include "estimate/trace_structural.hpp"
#include "estimate/trace_whatif.hpp"
#include "graph/load_input.hpp"

namespace lumos::cli {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A temporary folder removed on scope exit.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char tmpl[] = "/tmp/lumos_bench_whatif_XXXXXX";
    LUMOS_EXPECT(::mkdtemp(tmpl) != nullptr, "lumos bench whatif: cannot create a folder in /tmp");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

int bench_whatif(int argc, char** argv) {
  cxxopts::Options o("lumos bench whatif", "Time trace what-ifs on a generated ~100K-node job");
  constexpr CountOption kRuns{"runs", 1, 100}, kLayers{"layers", 8, 1024};
  o.add_options()(kRuns.name, count_help("timed repetitions of each edit", kRuns),
                  count_value("5"))(
      kLayers.name,
      count_help("layers of the traced job, a multiple of 8 (32: about 100K nodes over 4 stages)",
                 kLayers),
      count_value("32"))("json", "print JSON")("h,help", "show this help");
  add_quiet_option(o);
  const auto a = parse_options(o, argc, argv);
  if (a.count("help"))
    return std::cout << help_with_examples(o, {"lumos bench whatif  # about 100K nodes, 5 runs",
                                               "lumos bench whatif --layers 64 --runs 3 --json"})
                     << '\n',
           0;
  refuse_unexpected_args(a, "lumos bench whatif");
  const int runs = static_cast<int>(count_of(a, kRuns, "lumos bench whatif: "));
  const int64_t layers = count_of(a, kLayers, "lumos bench whatif: ");
  LUMOS_EXPECT(layers % 8 == 0,
               "lumos bench whatif: --layers must be a multiple of 8 from 8 to 1024");
  const cost::KernelsDb& db = cost::embedded_db();
  estimate::EstimateRequest job;
  job.model = model::preset("gpt3-15b");
  job.model.layers = layers;
  job.cfg.tp = 2, job.cfg.pp = 4, job.cfg.dp = 2, job.cfg.gbs = 128;  // 64 micro-batches
  ScratchDir dir;
  const estimate::EstimateRun run = estimate::run_estimate(job, db);
  estimate::write_stage_traces(run.step, run.replay, dir.path + "/job", run.estimate.gpu);
  auto t0 = std::chrono::steady_clock::now();
  const graph::LoadedInput in = graph::load_job(dir.path + "/job");
  const double load_ms = ms_since(t0);
  estimate::StructuralRequest req;
  req.model = job.model;
  req.edit.layers = 4 * layers;
  std::vector<double> structural_ms, edited_build_ms, edited_replay_ms, dp_ms;
  uint64_t edited_nodes = 0;
  Progress progress("runs", quiet(a));
  for (int r = 0; r < runs; ++r) {
    t0 = std::chrono::steady_clock::now();
    const estimate::StructuralAnswer s = estimate::run_structural_whatif(in, req, db);
    structural_ms.push_back(ms_since(t0));
    edited_build_ms.push_back(s.edited.estimate.build_ms);
    edited_replay_ms.push_back(s.edited.estimate.replay_ms);
    edited_nodes = s.edited.estimate.nodes;
    estimate::WhatifRequest w;
    w.dp = 16;
    w.backend = engine::Backend::kReference;
    t0 = std::chrono::steady_clock::now();
    (void)estimate::run_whatif(in, w, db);
    dp_ms.push_back(ms_since(t0));
    progress(static_cast<uint64_t>(r) + 1, static_cast<uint64_t>(runs));
  }
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object().field("traced_nodes", static_cast<uint64_t>(in.graph.num_nodes()));
    w.field("edited_nodes", edited_nodes).field("load_ms", load_ms);
    w.field("structural_edit_ms", median(structural_ms));
    w.field("edited_build_ms", median(edited_build_ms));
    w.field("edited_replay_ms", median(edited_replay_ms));
    w.field("dp_edit_ms", median(dp_ms)).field("runs", runs).end_object();
    std::cout << '\n';
    return 0;
  }
  std::cout << strprintf(
      "lumos bench whatif: gpt3-15b, %lld layers, TP 2 x PP 4 x DP 2, 64 micro-batches, written by "
      "lumos generate\n"
      "  traced job        %u graph nodes over 4 stage traces, loaded in %.0f ms\n"
      "  layers x4         %llu graph nodes; the edit takes %.0f ms (median of %d): recognise, "
      "calibrate, and the edited graph built in %.0f ms and replayed in %.0f ms\n"
      "  dp 2 -> 16        the traced graph's collectives repriced and replayed in %.0f ms\n",
      static_cast<long long>(layers), in.graph.num_nodes(), load_ms,
      static_cast<unsigned long long>(edited_nodes), median(structural_ms), runs,
      median(edited_build_ms), median(edited_replay_ms), median(dp_ms));
  return 0;
}

}  // namespace lumos::cli
