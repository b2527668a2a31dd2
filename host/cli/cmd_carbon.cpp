// lumos carbon: one configuration's energy and carbon, from a model-driven estimate or from a
// trace (its replayed steps, or a what-if of them on another GPU or at other speeds), on a
// region's annual intensity or an hourly series with the best start in a window.
#include <cxxopts.hpp>

#include <iostream>
#include <optional>
#include <set>
#include <string>

#include "carbon/energy.hpp"
#include "carbon/grid_series.hpp"
#include "carbon/trace_energy.hpp"
#include "cli/commands.hpp"
#include "cli/layout_options.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/trace_replay.hpp"
#include "estimate/trace_whatif.hpp"
#include "graph/load_input.hpp"
#include "whatif/gemm_pricing.hpp"
#include "whatif/gpu_variants.hpp"
#include "whatif/speed_axes.hpp"

namespace lumos::cli {

using namespace lumos::model;
using namespace lumos::estimate;

namespace {

// What `lumos carbon` accounts for: one GPU's energy per step, the GPUs, the steps of the run.
struct CarbonSubject {
  std::string title;  // the first line of the report
  carbon::EnergyParts per_gpu_step;
  double step_us = 0, gpus = 0, steps = 0;
};

}  // namespace

int cmd_carbon(int argc, char** argv) {
  cxxopts::Options o("lumos carbon",
                     "Energy and carbon of a training run: the step from an estimate (the "
                     "estimate's options) or a trace (--trace), its energy by part, operational "
                     "carbon on a grid region or an hourly series (and the best start), embodied "
                     "carbon beside it");
  layout_options(o);
  o.add_options()("tokens", "tokens to train (an estimate)",
                  cxxopts::value<double>()->default_value("300e9"))(
      "trace", "account for a traced job instead: a Kineto trace or .lgraph (its steps replayed)",
      cxxopts::value<std::string>())("traced-gpu",
                                     "with --trace: the GPU it ran on (default: the trace's "
                                     "deviceProperties, else h100)",
                                     cxxopts::value<std::string>())(
      "on-gpu", "with --trace: what if it ran on this GPU (as lumos whatif --gpus)",
      cxxopts::value<std::string>())(
      "speed", "with --trace: what if kernel classes ran faster, e.g. compute=2,comm=0.5",
      cxxopts::value<std::string>())("steps",
                                     "with --trace: steps in the run (default: the traced steps)",
                                     cxxopts::value<double>())(
      "gpus", "with --trace: GPUs in the job (default: the traced ranks)",
      cxxopts::value<int64_t>())("region", "grid region in kernels_db/carbon.json (default: world)",
                                 cxxopts::value<std::string>())(
      "grid-series", "hourly grid intensity CSV (Electricity Maps export or timestamp,gCO2eq/kWh)",
      cxxopts::value<std::string>())("basis", "with an Electricity Maps export: lifecycle | direct",
                                     cxxopts::value<std::string>()->default_value("lifecycle"))(
      "start", "when the run starts (UTC; default: the series' start)",
      cxxopts::value<std::string>())(
      "window-end", "latest start to consider: also report the start that emits least",
      cxxopts::value<std::string>())("pue", "the site's PUE (default: kernels_db/carbon.json's)",
                                     cxxopts::value<double>());
  const auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << '\n';
    return 0;
  }
  if (!a.unmatched().empty())
    throw InputError("lumos carbon: unexpected argument '" + a.unmatched()[0] + "'");
  LUMOS_EXPECT(!(a.count("region") && a.count("grid-series")),
               "lumos carbon: give --region or --grid-series, not both");
  LUMOS_EXPECT(a.count("grid-series") || (!a.count("start") && !a.count("window-end")),
               "lumos carbon: --start and --window-end go with --grid-series");
  const bool traced = a.count("trace") > 0;
  for (const char* k : {"traced-gpu", "steps", "gpus", "on-gpu", "speed"})
    LUMOS_EXPECT(traced || !a.count(k), std::string("lumos carbon: --") + k + " goes with --trace");
  LUMOS_EXPECT(!traced || !a.count("tokens"), "lumos carbon: --tokens goes with an estimate");
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  const double pue = a.count("pue") ? a["pue"].as<double>() : db.carbon.pue;
  LUMOS_EXPECT(pue >= 1 && pue <= 5, "lumos carbon: --pue must lie in [1, 5]");
  // The grid first: a bad series should not cost an estimate.
  std::optional<carbon::GridSeries> series;
  const cost::GridRegion* region = nullptr;
  if (a.count("grid-series")) {
    const std::string basis = a["basis"].as<std::string>();
    LUMOS_EXPECT(basis == "lifecycle" || basis == "direct",
                 "--basis " + basis + ": expected lifecycle or direct");
    series = carbon::load_grid_series(
        a["grid-series"].as<std::string>(),
        basis == "direct" ? carbon::IntensityBasis::kDirect : carbon::IntensityBasis::kLifecycle);
  } else {
    region = &db.carbon.region(a.count("region") ? a["region"].as<std::string>() : "world");
  }

  CarbonSubject subject;
  if (traced) {
    const graph::LoadedInput in = graph::load_input(a["trace"].as<std::string>());
    const std::string gpu_name = estimate::traced_gpu_of(
        in, a.count("traced-gpu") ? a["traced-gpu"].as<std::string>() : "", db);
    LUMOS_EXPECT(!(a.count("on-gpu") && a.count("speed")),
                 "lumos carbon: give --on-gpu or --speed, not both");
    // The what-if as lumos whatif prices it: per-class speed factors of the replay
    // (whatif/gpu_variants.hpp) and, on another GPU, the trace's GEMMs, attention and
    // memory-bound kernels priced for that GPU (whatif/gemm_pricing.hpp).
    const std::string run_gpu =
        a.count("on-gpu") ? db.gpu(a["on-gpu"].as<std::string>()).name : gpu_name;
    estimate::ReplayRequest rr;
    rr.variant = a.count("on-gpu") ? whatif::variants_from_gpus(db, gpu_name, {run_gpu})
                 : a.count("speed")
                     ? whatif::parse_speed_variant(a["speed"].as<std::string>(), "--speed")
                     : replay::VariantBatch::identity(1);
    replay::GemmPricing pricing;
    if (a.count("on-gpu")) {
      const whatif::TracedKernels tk = whatif::classify_traced(in.tables(), db);
      if (!tk.tables.empty())
        pricing = whatif::gemm_pricing(in.graph, tk, db, gpu_name, {run_gpu});
      else if (run_gpu != gpu_name)
        std::cerr << "lumos carbon: warning: " << in.label
                  << " has no trace tables (a graph file): on " << run_gpu
                  << " its kernels scale by class ratios only, without GEMM shapes, attention "
                     "clocks or HBM\n";
      if (pricing.priced_nodes() > 0) rr.pricing = &pricing;
    }
    const estimate::ReplayAnswer rep = estimate::replay_trace(in, rr);
    LUMOS_EXPECT(!rep.steps.empty(), in.label + ": no step to account for");
    std::set<int32_t> ranks;
    double replayed_us = 0;
    for (const replay::StepTime& st : rep.steps)
      replayed_us += st.replayed_us, ranks.insert(st.rank);
    subject.step_us = replayed_us / static_cast<double>(rep.steps.size());
    subject.gpus = a.count("gpus") ? static_cast<double>(a["gpus"].as<int64_t>())
                                   : static_cast<double>(ranks.size());
    subject.steps = a.count("steps") ? a["steps"].as<double>()
                                     : static_cast<double>(rep.steps.size() / ranks.size());
    LUMOS_EXPECT(
        subject.gpus >= 1 && subject.gpus <= 1e7 && subject.steps > 0 && subject.steps <= 1e12,
        "lumos carbon: --gpus and --steps must be positive (at most 1e7 and 1e12)");
    // Summed over every rank's steps, each kernel as replayed: the mean per GPU and step.
    std::vector<double> dur(in.graph.num_nodes());
    for (graph::NodeId n = 0; n < in.graph.num_nodes(); ++n)
      dur[n] = rep.replay.finish_us[n] - rep.replay.start_us[n];
    const carbon::TracedBusy busy = carbon::traced_kernel_busy_us(in.graph, db, &dur);
    const double rank_steps = static_cast<double>(rep.steps.size());
    subject.per_gpu_step = carbon::trace_step_energy(db.gpu(run_gpu), db.carbon, pue,
                                                     subject.step_us, busy, rank_steps);
    subject.title = strprintf(
        "lumos carbon: trace %s (%s)%s, %zu traced step%s of %.3f s (replayed), %.4g steps on %.0f "
        "GPUs: %.2f h",
        in.label.c_str(), gpu_name.c_str(),
        a.count("on-gpu")  ? (" moved onto " + run_gpu).c_str()
        : a.count("speed") ? (" at --speed " + a["speed"].as<std::string>()).c_str()
                           : "",
        rep.steps.size(), rep.steps.size() == 1 ? "" : "s", subject.step_us * 1e-6, subject.steps,
        subject.gpus, subject.steps * subject.step_us * 1e-6 / 3600.0);
  } else {
    const double tokens = a["tokens"].as<double>();
    LUMOS_EXPECT(tokens > 0 && tokens <= 1e16,
                 "lumos carbon: --tokens must be positive, at most 1e16");
    const EstimateRun run = run_estimate(request_from(a), db);
    const Estimate& e = run.estimate;
    // The graph is built whole: each kernel's duration is its slot's.
    std::vector<double> slot_us(run.step.slots.size(), 0.0);
    for (graph::NodeId n = 0; n < run.step.graph.num_nodes(); ++n) {
      const int32_t slot = run.step.meta_of(n).slot;
      if (slot >= 0) slot_us[static_cast<size_t>(slot)] = run.step.graph.dur_us[n];
    }
    const model::KernelBusy busy = model::kernel_busy_us(run.step, slot_us);
    const double pp = e.cfg.pp;
    subject.step_us = e.step_time_us;
    subject.gpus = static_cast<double>(e.cfg.gpus());
    subject.steps = tokens / (static_cast<double>(e.cfg.gbs) * static_cast<double>(e.model.seq));
    subject.per_gpu_step = carbon::step_energy(db.gpu(e.gpu), db.carbon, pue, e.step_time_us,
                                               busy.compute_bound_us / pp,
                                               busy.memory_bound_us / pp, busy.comm_us / pp);
    subject.title = strprintf(
        "lumos carbon: %s on %lld x %s (TP %d x CP %d x PP %d x DP %d), %.4g tokens: %.1f h to "
        "train (%.0f steps of %.3f s)",
        e.model.name.c_str(), static_cast<long long>(e.cfg.gpus()), e.gpu.c_str(), e.cfg.tp,
        e.cfg.cp, e.cfg.pp, e.cfg.dp, tokens, subject.steps * e.step_time_us * 1e-6 / 3600.0,
        subject.steps, e.step_time_us * 1e-6);
  }

  const carbon::EnergyParts& parts = subject.per_gpu_step;
  const double hours = subject.steps * subject.step_us * 1e-6 / 3600.0;
  double grid = region ? region->g_per_kwh : 0;
  std::string grid_text;
  std::optional<carbon::BestStart> best;
  if (series) {
    const int64_t start = a.count("start")
                              ? carbon::parse_utc(a["start"].as<std::string>(), "--start")
                              : series->start_unix_s;
    grid = carbon::mean_intensity(*series, start, hours * 3600.0);
    grid_text =
        strprintf("series %s%s%s (%s): mean %.1f gCO2/kWh from %s to %s", series->path.c_str(),
                  series->zone.empty() ? "" : ", zone ", series->zone.c_str(),
                  series->basis_known
                      ? (series->basis == carbon::IntensityBasis::kDirect ? "direct" : "life cycle")
                      : "basis not stated",
                  grid, carbon::format_utc(start).c_str(),
                  carbon::format_utc(start + static_cast<int64_t>(hours * 3600.0)).c_str());
    if (a.count("window-end"))
      best = carbon::best_start(
          *series, start, carbon::parse_utc(a["window-end"].as<std::string>(), "--window-end"),
          hours * 3600.0);
  } else {
    grid_text = strprintf("region %s: %.4g gCO2/kWh (%s, %s; %s)", region->name.c_str(),
                          region->g_per_kwh, region->basis.c_str(),
                          region->year ? std::to_string(region->year).c_str() : "year not stated",
                          region->source.c_str());
  }
  const carbon::CarbonAccount acc = carbon::carbon_account(parts, subject.gpus, subject.steps,
                                                           hours * subject.gpus, grid, db.carbon);
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object().field("subject", subject.title).field("gpus", subject.gpus);
    w.field("step_time_s", subject.step_us * 1e-6).field("steps", subject.steps);
    w.field("hours", hours).field("pue", pue);
    w.key("step_energy_per_gpu_j").begin_object().field("gpu_idle", parts.gpu_idle_j);
    w.field("gpu_compute_bound", parts.gpu_compute_j).field("gpu_memory_bound", parts.gpu_memory_j);
    w.field("gpu_comm", parts.gpu_comm_j).field("node", parts.node_j);
    w.field("facility", parts.facility_j).field("total", parts.total_j()).end_object();
    w.field("gpu_energy_kwh", acc.gpu_kwh).field("node_energy_kwh", acc.node_kwh);
    w.field("facility_energy_kwh", acc.facility_kwh).field("energy_kwh", acc.energy_kwh);
    w.field("grid_g_per_kwh", grid).field("grid", grid_text);
    w.field("operational_kg", acc.operational_kg).field("embodied_kg", acc.embodied_kg);
    w.field("sci_kg", acc.sci_kg);
    if (best)
      w.key("best_start")
          .begin_object()
          .field("start", carbon::format_utc(best->start_unix_s))
          .field("mean_g_per_kwh", best->mean_g_per_kwh)
          .field("operational_kg", acc.energy_kwh * best->mean_g_per_kwh / 1000.0)
          .field("worst_mean_g_per_kwh", best->worst_mean_g_per_kwh)
          .end_object();
    w.end_object();
    std::cout << '\n';
    return 0;
  }
  std::cout << subject.title << '\n';
  const double step_s = subject.step_us * 1e-6;
  std::cout << strprintf(
      "  power per GPU     %.0f W: idle %.0f, matrix %.0f, memory-bound %.0f, comm %.0f; node "
      "%.0f; facility %.0f (PUE %.2f)\n",
      parts.total_j() / step_s, parts.gpu_idle_j / step_s, parts.gpu_compute_j / step_s,
      parts.gpu_memory_j / step_s, parts.gpu_comm_j / step_s, parts.node_j / step_s,
      parts.facility_j / step_s, pue);
  std::cout << strprintf("  energy            %.4g kWh: GPUs %.4g, nodes %.4g, facility %.4g\n",
                         acc.energy_kwh, acc.gpu_kwh, acc.node_kwh, acc.facility_kwh);
  std::cout << "  grid              " << grid_text << '\n';
  std::cout << strprintf("  operational       %.4g kgCO2\n", acc.operational_kg);
  if (best)
    std::cout << strprintf(
        "  best start        %s: mean %.1f gCO2/kWh, %.4g kgCO2 (%+.1f%%; the worst start in "
        "the window: %.1f gCO2/kWh)\n",
        carbon::format_utc(best->start_unix_s).c_str(), best->mean_g_per_kwh,
        acc.energy_kwh * best->mean_g_per_kwh / 1e3,
        grid > 0 ? 100 * (best->mean_g_per_kwh / grid - 1) : 0.0, best->worst_mean_g_per_kwh);
  std::cout << strprintf(
      "  embodied (beside) %.4g kgCO2: %.4g GPU-hours of %.0f kg per GPU and its server share, "
      "linear over %.0f years; SCI %.4g kgCO2. Placing and scheduling owned hardware: decide on "
      "operational carbon (lumos place)\n",
      acc.embodied_kg, hours * subject.gpus,
      db.carbon.gpu_embodied_kg + db.carbon.server_embodied_kg_per_gpu, db.carbon.lifetime_y,
      acc.sci_kg);
  return 0;
}

}  // namespace lumos::cli
