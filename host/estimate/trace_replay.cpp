#include "estimate/trace_replay.hpp"

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "replay/rank_windows.hpp"
#include "replay/slot_table.hpp"
#include "whatif/speed_axes.hpp"

namespace lumos::estimate {

ReplayAnswer replay_trace(const graph::LoadedInput& in, const ReplayRequest& req) {
  const graph::Graph& g = in.graph;
  LUMOS_EXPECT(!req.transplant || in.table.has_value(),
               in.label + ": transplant needs the trace itself, not a .lgraph file");
  // One variant; the reference replay gives the details (breakdown, critical path, timeline)
  // and the chosen engine the step times.
  LUMOS_EXPECT(!req.variant || (req.speed.empty() && req.variant->count == 1),
               "replay: one variant, given either as speed factors or as a batch");
  const replay::VariantBatch variant =
      req.variant         ? *req.variant
      : req.speed.empty() ? replay::VariantBatch::identity(1)
                          : whatif::parse_speed_variant(req.speed, "lumos replay: --speed");
  // The durations every engine uses: the slot table's (class factors, priced kernels).
  const replay::SlotTable slots = replay::slot_table(g, variant, req.pricing);
  std::vector<double> dur(g.num_nodes());
  for (graph::NodeId v = 0; v < g.num_nodes(); ++v) dur[v] = slots.duration_us(v, 0);
  ReplayAnswer a;
  a.replay = replay::reference_replay(g, &dur);
  const replay::ReplayResult& r = a.replay;
  a.steps = replay::step_times(g, r);
  a.backend = "reference";
  if (req.backend != engine::Backend::kReference) {
    const replay::BatchResult br = engine::batch_replay(g, variant, req.backend, req.pricing);
    a.backend = br.backend;
    for (size_t k = 0; k < a.steps.size(); ++k) {
      a.steps[k].replayed_us = br.step_us[k][0];
      const double m = a.steps[k].measured_us;
      a.steps[k].error_pct = m > 0 ? (a.steps[k].replayed_us - m) / m * 100.0 : 0.0;
    }
  }
  // Over each rank's step windows, cut where its next step begins (replay/rank_windows.hpp).
  std::vector<double> mfinish(g.num_nodes());
  for (graph::NodeId v = 0; v < g.num_nodes(); ++v) mfinish[v] = g.measured_finish_us(v);
  std::vector<double> replayed_us(a.steps.size()), measured_us(g.steps.size());
  for (size_t k = 0; k < a.steps.size(); ++k) replayed_us[k] = a.steps[k].replayed_us;
  for (size_t k = 0; k < g.steps.size(); ++k) measured_us[k] = g.steps[k].measured_us;
  const replay::WindowNodes replayed_nodes(g, r.start_us, r.finish_us);
  for (const replay::StepWindow& w : replay::step_windows(g, r.start_us, replayed_us))
    a.replayed +=
        replay::breakdown(g, r.start_us, r.finish_us,
                          replayed_nodes.in(w.rank, w.begin_us, w.end_us), w.begin_us, w.end_us);
  const replay::WindowNodes measured_nodes(g, g.measured_start_us, mfinish);
  for (const replay::StepWindow& w : replay::step_windows(g, g.measured_start_us, measured_us))
    a.measured +=
        replay::breakdown(g, g.measured_start_us, mfinish,
                          measured_nodes.in(w.rank, w.begin_us, w.end_us), w.begin_us, w.end_us);
  for (const replay::RankWindows& w : replay::rank_windows(g, r, a.steps)) a.idle += w.idle;
  a.top_kernels = replay::top_ops(g, r, replay::OpSide::kGpu, kTopOps);
  a.top_cpu_ops = replay::top_ops(g, r, replay::OpSide::kCpu, kTopOps);
  a.streams = replay::stream_busy(g, r);
  a.critical_path = replay::critical_path(g, r, -1, req.critical_path);
  const cost::KernelsDb& db = cost::embedded_db();
  a.peer_waits = whatif::peer_waits(g, in.tables(), db);
  if (req.transplant)
    a.transplant = whatif::transplant(*in.table, req.transplant->first, req.transplant->second);
  return a;
}

JobReplay replay_job(const std::string& dir, const whatif::StragglerEdits& edits,
                     bool allow_partial, const std::string& speed) {
  // Parsed before the folder is read: a bad factor should not cost the load.
  const replay::VariantBatch variant =
      speed.empty() ? replay::VariantBatch::identity(1)
                    : whatif::parse_speed_variant(speed, "lumos replay: --speed");
  JobReplay j;
  std::vector<trace::EventTable> tables;
  j.job = graph::load_multi_rank(dir, allow_partial, &tables);
  std::vector<const trace::EventTable*> traces;
  for (const auto& t : tables) traces.push_back(&t);
  const cost::KernelsDb& db = cost::embedded_db();
  j.peer_waits = whatif::peer_waits(j.job.graph, traces, db);
  std::vector<double> dur = whatif::apply_stragglers(&j.job, edits);
  const graph::Graph& g = j.job.graph;
  for (graph::NodeId v = 0; v < g.num_nodes(); ++v)
    dur[v] /= variant.speed[static_cast<size_t>(g.cls[v])][0];
  j.replay = replay::reference_replay(j.job.graph, &dur);
  j.steps = replay::step_times(j.job.graph, j.replay);
  j.waits = replay::collective_waits(j.job, j.replay, j.steps);
  j.ranks = replay::rank_windows(g, j.replay, j.steps);
  return j;
}

}  // namespace lumos::estimate
