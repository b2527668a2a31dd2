#include "estimate/traced_sweep.hpp"

#include "common/error.hpp"

namespace lumos::estimate {

std::unique_ptr<TracedSweep> trace_sweep(const std::string& trace,
                                         const std::function<bool(const char*)>& given,
                                         const cost::KernelsDb& db, sweep::SweepSpec* spec,
                                         const whatif::JobHints& hints) {
  auto out = std::make_unique<TracedSweep>();
  out->input = graph::load_job(trace);
  StructuralRequest q;
  q.model = spec->model;
  q.hints = hints;
  if (given("stack")) {
    LUMOS_EXPECT(spec->stacks.size() == 1,
                 "lumos sweep --trace: --stack names the traced job's stack (one)");
    q.stack = spec->stacks.front();
  }
  out->traced = calibrate_trace(out->input, q, db);
  const CalibratedTrace& traced = out->traced;
  const model::ParallelConfig& c = traced.traced.cfg;
  spec->model = traced.traced.model;
  spec->stacks = {c.stack};
  auto keep = [&](const char* k, std::vector<int64_t>* axis, int64_t v) {
    if (!given(k)) *axis = {v};
  };
  keep("tp", &spec->tp, c.tp), keep("cp", &spec->cp, c.cp), keep("pp", &spec->pp, c.pp);
  keep("interleave", &spec->interleave, c.interleave), keep("mbs", &spec->mbs, c.mbs);
  keep("gbs", &spec->gbs, c.gbs);
  if (!given("gpus") && !given("dp")) spec->total_gpus.clear(), spec->dp = {c.dp};
  if (!given("recompute")) spec->recompute = {c.recompute};
  if (!given("sp")) spec->sequence_parallel = {c.sequence_parallel ? 1 : 0};
  if (!given("dist-opt")) spec->distributed_optimizer = {c.distributed_optimizer ? 1 : 0};
  if (!given("fsdp")) spec->fsdp = {c.fsdp ? 1 : 0};
  if (!given("dtype")) spec->dtypes = {c.dtype};
  if (!given("gpu")) spec->gpus = {traced.request.gpu};
  spec->adjust_costs = [&traced, &db](model::StepCosts& k) { traced.calibrate(k, db); };
  return out;
}

}  // namespace lumos::estimate
