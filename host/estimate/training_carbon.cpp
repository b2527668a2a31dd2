#include "estimate/training_carbon.hpp"

#include <set>

#include "carbon/trace_energy.hpp"
#include "common/engineering.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/physical_ranges.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/trace_replay.hpp"
#include "estimate/trace_whatif.hpp"
#include "graph/load_input.hpp"
#include "replay/rank_windows.hpp"
#include "whatif/gemm_pricing.hpp"
#include "whatif/gpu_variants.hpp"
#include "whatif/speed_axes.hpp"

namespace lumos::estimate {
namespace {

// The run's step, GPUs and steps, and one GPU's energy per step (the answer's first fields).
void trace_subject(const CarbonRequest& req, const cost::KernelsDb& db, CarbonAnswer& out) {
  const graph::LoadedInput in = graph::load_input(*req.trace);
  const std::string gpu_name = traced_gpu_of(in, req.traced_gpu, db);
  LUMOS_EXPECT(!(req.on_gpu && req.speed), "lumos carbon: give --on-gpu or --speed, not both");
  // The what-if as lumos whatif prices it: per-class speed factors of the replay
  // (whatif/gpu_variants.hpp) and, on another GPU, the trace's GEMMs, attention and
  // memory-bound kernels priced for that GPU (whatif/gemm_pricing.hpp).
  const std::string run_gpu = req.on_gpu ? db.gpu(*req.on_gpu).name : gpu_name;
  ReplayRequest rr;
  rr.variant = req.on_gpu  ? whatif::variants_from_gpus(db, gpu_name, {run_gpu})
               : req.speed ? whatif::parse_speed_variant(*req.speed, "--speed")
                           : replay::VariantBatch::identity(1);
  replay::GemmPricing pricing;
  if (req.on_gpu) {
    const whatif::TracedKernels tk = whatif::classify_traced(in.tables(), db);
    if (!tk.tables.empty())
      pricing = whatif::gemm_pricing(in.graph, tk, db, gpu_name, {run_gpu});
    else if (run_gpu != gpu_name)
      out.warning = in.label + " has no trace tables (a graph file): on " + run_gpu +
                    " its kernels scale by class ratios only, without GEMM shapes, attention "
                    "clocks or HBM";
    if (pricing.priced_nodes() > 0) rr.pricing = &pricing;
  }
  const ReplayAnswer rep = replay_trace(in, rr);
  LUMOS_EXPECT(!rep.steps.empty(), in.label + ": no step to account for");
  // A step's time is its window cut where its rank's next step begins (replay/rank_windows.hpp):
  // a CPU that runs ahead of its GPU overlaps the steps, and a run of N steps takes N periods.
  std::set<int32_t> ranks;
  std::vector<double> step_lengths_us;
  for (const replay::StepTime& st : rep.steps)
    step_lengths_us.push_back(st.replayed_us), ranks.insert(st.rank);
  double replayed_us = 0;
  for (const replay::StepWindow& w :
       replay::step_windows(in.graph, rep.replay.start_us, step_lengths_us))
    replayed_us += w.end_us - w.begin_us;
  out.step_us = replayed_us / static_cast<double>(rep.steps.size());
  // Power is energy over time: a step that takes none has no power to report.
  LUMOS_EXPECT(out.step_us > 0, in.label +
                                    ": its steps replay to no time (no GPU or CPU work "
                                    "with a duration); nothing to account for");
  out.gpus = req.gpus ? static_cast<double>(*req.gpus) : static_cast<double>(ranks.size());
  out.steps = req.steps ? *req.steps : static_cast<double>(rep.steps.size() / ranks.size());
  LUMOS_EXPECT(out.gpus >= 1 && out.gpus <= 1e7 && out.steps > 0 && out.steps <= 1e12,
               "lumos carbon: --gpus and --steps must be positive (at most 1e7 and 1e12)");
  // Summed over every rank's steps, each kernel as replayed: the mean per GPU and step.
  std::vector<double> dur(in.graph.num_nodes());
  for (graph::NodeId n = 0; n < in.graph.num_nodes(); ++n)
    dur[n] = rep.replay.finish_us[n] - rep.replay.start_us[n];
  const carbon::TracedBusy busy = carbon::traced_kernel_busy_us(in.graph, db, &dur);
  out.per_gpu_step = carbon::trace_step_energy(db.gpu(run_gpu), db.carbon, out.pue, out.step_us,
                                               busy, static_cast<double>(rep.steps.size()));
  out.subject = strprintf(
      "lumos carbon: trace %s (%s)%s, %zu traced step%s of %.3f s (replayed), %.4g steps on %.0f "
      "GPUs: %.2f h",
      in.label.c_str(), gpu_name.c_str(),
      req.on_gpu  ? (" moved onto " + run_gpu).c_str()
      : req.speed ? (" at --speed " + *req.speed).c_str()
                  : "",
      rep.steps.size(), rep.steps.size() == 1 ? "" : "s", out.step_us * 1e-6, out.steps, out.gpus,
      out.steps * out.step_us * 1e-6 / 3600.0);
}

void estimate_subject(const CarbonRequest& req, const cost::KernelsDb& db, CarbonAnswer& out) {
  LUMOS_EXPECT(req.tokens >= 1 && req.tokens <= 1e16,
               "lumos carbon: --tokens must be at least 1, at most 1e16");
  const EstimateRun run = run_estimate(req.estimate, db);
  const Estimate& e = run.estimate;
  // The graph is built whole: each kernel's duration is its slot's.
  std::vector<double> slot_us(run.step.slots.size(), 0.0);
  for (graph::NodeId n = 0; n < run.step.graph.num_nodes(); ++n) {
    const int32_t slot = run.step.meta_of(n).slot;
    if (slot >= 0) slot_us[static_cast<size_t>(slot)] = run.step.graph.dur_us[n];
  }
  const model::KernelBusy busy = model::kernel_busy_us(run.step, slot_us);
  const double pp = e.cfg.pp;
  out.step_us = e.step_time_us;
  out.gpus = static_cast<double>(e.cfg.gpus());
  out.steps = req.tokens / (static_cast<double>(e.cfg.gbs) * static_cast<double>(e.model.seq));
  out.per_gpu_step =
      carbon::step_energy(db.gpu(e.gpu), db.carbon, out.pue, e.step_time_us,
                          busy.compute_bound_us / pp, busy.memory_bound_us / pp, busy.comm_us / pp);
  out.subject = strprintf(
      "lumos carbon: %s on %lld x %s (TP %d x CP %d x PP %d x DP %d), %s: %.1f h to train (%s "
      "of %.3f s)",
      e.model.name.c_str(), static_cast<long long>(e.cfg.gpus()), e.gpu.c_str(), e.cfg.tp, e.cfg.cp,
      e.cfg.pp, e.cfg.dp, engineering(req.tokens, "tokens").c_str(),
      out.steps * e.step_time_us * 1e-6 / 3600.0, engineering(out.steps, "steps").c_str(),
      e.step_time_us * 1e-6);
}

}  // namespace

CarbonAnswer run_carbon(const CarbonRequest& req, const cost::KernelsDb& db) {
  CarbonAnswer out;
  out.pue = req.pue;
  // The grid first: a bad series should not cost an estimate.
  std::optional<carbon::GridSeries> series;
  const cost::GridRegion* region = nullptr;
  if (req.grid_series)
    series = carbon::load_grid_series(*req.grid_series, req.basis);
  else
    region = &db.carbon.region(req.region);
  req.trace ? trace_subject(req, db, out) : estimate_subject(req, db, out);

  out.hours = out.steps * out.step_us * 1e-6 / 3600.0;
  out.grid_g_per_kwh = region ? region->g_per_kwh : 0;
  if (series) {
    const int64_t start =
        req.start ? carbon::parse_utc(*req.start, "--start") : series->start_unix_s;
    out.grid_g_per_kwh = carbon::mean_intensity(*series, start, out.hours * 3600.0);
    out.grid =
        strprintf("series %s%s%s (%s): mean %.1f gCO2/kWh from %s to %s", series->path.c_str(),
                  series->zone.empty() ? "" : ", zone ", series->zone.c_str(),
                  series->basis_known
                      ? (series->basis == carbon::IntensityBasis::kDirect ? "direct" : "life cycle")
                      : "basis not stated",
                  out.grid_g_per_kwh, carbon::format_utc(start).c_str(),
                  carbon::format_utc(start + static_cast<int64_t>(out.hours * 3600.0)).c_str());
    if (req.window_end)
      out.best = carbon::best_start(
          *series, start, carbon::parse_utc(*req.window_end, "--window-end"), out.hours * 3600.0);
  } else {
    out.grid = strprintf("region %s: %.4g gCO2/kWh (%s, %s; %s)", region->name.c_str(),
                         region->g_per_kwh, region->basis.c_str(),
                         region->year ? std::to_string(region->year).c_str() : "year not stated",
                         region->source.c_str());
  }
  out.account = carbon::carbon_account(out.per_gpu_step, out.gpus, out.steps, out.hours * out.gpus,
                                       out.grid_g_per_kwh, db.carbon);
  // The options' ranges keep these finite; this is the check that nothing overflowed between.
  const carbon::CarbonAccount& c = out.account;
  for (const auto& [v, what] : {std::pair<double, const char*>{out.hours, "the run's hours"},
                                {c.energy_kwh, "the run's energy"},
                                {c.operational_kg, "the operational carbon"},
                                {c.embodied_kg, "the embodied carbon"},
                                {c.sci_kg, "the SCI"}})
    expect_finite_result(v, std::string("lumos carbon: ") + what);
  return out;
}

}  // namespace lumos::estimate
