// lumos bench estimate: the model-driven estimate against published DGX-H100 throughputs (the
// calibration check) and the time an estimate of the largest preset at 1024 GPUs takes.
#include <cxxopts.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/published_runs.hpp"

namespace lumos::cli {

int bench_estimate(int argc, char** argv) {
  cxxopts::Options o("lumos bench estimate",
                     "Calibration check against published DGX-H100 runs, and estimate latency");
  o.add_options()("runs", "timed estimates of the largest preset at 1024 GPUs",
                  cxxopts::value<int>()->default_value("5"))("json", "print JSON")(
      "h,help", "show this help");
  const auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << '\n';
    return 0;
  }
  const int runs = a["runs"].as<int>();
  LUMOS_EXPECT(runs >= 1 && runs <= 1000, "lumos bench estimate: --runs must be 1..1000");
  const auto& db = cost::embedded_db();
  struct Row {
    const estimate::PublishedRun* run;
    double lumos_tflops, step_s, error_pct;
    bool fits;
  };
  std::vector<Row> rows;
  for (const auto& p : estimate::published_runs()) {
    const auto e = estimate::run_estimate(p.request, db).estimate;
    rows.push_back(
        {&p, e.model_tflops_per_gpu, e.step_time_us * 1e-6,
         (e.model_tflops_per_gpu - p.model_tflops_per_gpu) / p.model_tflops_per_gpu * 100, e.fits});
  }
  // Latency: llama3-405b, the largest preset, on 1024 GPUs in Megatron-Bridge's layout.
  const estimate::PublishedRun* largest = nullptr;
  for (const auto& p : estimate::published_runs())
    if (p.request.cfg.gpus() == 1024 && p.request.model.name == "llama3-405b" &&
        (!largest || p.request.cfg.gbs < largest->request.cfg.gbs))
      largest = &p;
  LUMOS_EXPECT(largest != nullptr, "lumos bench estimate: no 1024-GPU llama3-405b run");
  std::vector<double> wall_s;
  estimate::Estimate last;
  for (int k = 0; k < runs; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    last = estimate::run_estimate(largest->request, db).estimate;
    wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> sorted = wall_s;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object().key("calibration").begin_array();
    for (const Row& r : rows)
      w.begin_object()
          .field("label", r.run->label)
          .field("options", r.run->options)
          .field("published_tflops_per_gpu", r.run->model_tflops_per_gpu)
          .field("lumos_tflops_per_gpu", r.lumos_tflops)
          .field("error_pct", r.error_pct)
          .field("step_time_s", r.step_s)
          .field("fits", r.fits)
          .field("source", r.run->source)
          .field("note", r.run->note)
          .end_object();
    w.end_array();
    w.key("latency").begin_object();
    w.field("options", largest->options).field("runs", runs).field("median_s", median);
    w.field("min_s", sorted.front()).field("max_s", sorted.back());
    w.field("nodes", last.nodes).field("edges", last.edges).end_object();
    w.end_object();
    std::cout << '\n';
    return 0;
  }
  std::printf("calibration: model TFLOP/s per GPU, lumos vs published (DGX-H100, FP8)\n");
  std::printf("  %-34s %10s %8s %8s %9s\n", "run", "published", "lumos", "error", "step (s)");
  for (const Row& r : rows)
    std::printf("  %-34s %10.0f %8.1f %+7.1f%% %9.3f%s\n", r.run->label.c_str(),
                r.run->model_tflops_per_gpu, r.lumos_tflops, r.error_pct, r.step_s,
                r.run->note.empty() ? "" : "  *");
  for (const Row& r : rows)
    if (!r.run->note.empty())
      std::printf("  * %s: %s\n", r.run->label.c_str(), r.run->note.c_str());
  std::printf(
      "latency: lumos estimate %s\n  %d runs: median %.3f s (min %.3f, max %.3f); %llu "
      "nodes, %llu edges\n",
      largest->options.c_str(), runs, median, sorted.front(), sorted.back(),
      static_cast<unsigned long long>(last.nodes), static_cast<unsigned long long>(last.edges));
  return 0;
}

}  // namespace lumos::cli
