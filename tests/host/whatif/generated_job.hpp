// A job written by `lumos generate` (one Kineto trace per pipeline stage) for the trace what-if
// tests, and the estimate it came from.
#pragma once
#include <string>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/generated_trace.hpp"
#include "support/test_util.hpp"

namespace lumos::testing {

struct JobConfig {
  const char* model = "gpt3-15b";
  int64_t layers = 8;
  int tp = 2, pp = 2, dp = 4, interleave = 1, cp = 1;
  int64_t gbs = 16, mbs = 1;
  bool distributed_optimizer = false;
  int64_t hidden = 0, ffn = 0;  // 0 keeps the preset's
  cost::Dtype dtype = cost::Dtype::kBf16;
  bool sequence_parallel = false;
  bool tp_only_amax_reduction = false;
};

inline estimate::EstimateRequest job_request(const JobConfig& c) {
  estimate::EstimateRequest r;
  r.model = model::preset(c.model);
  r.model.layers = c.layers;
  if (c.hidden) {  // the head dimension follows, as a what-if edit of the width does
    if (r.model.kv_heads == r.model.heads) r.model.kv_heads = r.model.heads;
    r.model.hidden = c.hidden, r.model.head_dim = c.hidden / r.model.heads;
  }
  if (c.ffn) r.model.ffn = c.ffn;
  r.cfg.mbs = c.mbs;
  r.cfg.tp = c.tp, r.cfg.pp = c.pp, r.cfg.dp = c.dp, r.cfg.interleave = c.interleave;
  r.cfg.cp = c.cp;
  r.cfg.gbs = c.gbs;
  r.cfg.distributed_optimizer = c.distributed_optimizer;
  r.cfg.dtype = c.dtype, r.cfg.sequence_parallel = c.sequence_parallel;
  r.cfg.tp_only_amax_reduction = c.tp_only_amax_reduction;
  return r;
}

// Writes the job's traces into `dir` (which must not exist yet) and returns its step time.
inline double write_job(const JobConfig& c, const std::string& dir) {
  const estimate::EstimateRun run = estimate::run_estimate(job_request(c), cost::embedded_db());
  estimate::write_stage_traces(run.step, run.replay, dir, run.estimate.gpu);
  return run.estimate.step_time_us;
}

inline double estimate_us(const JobConfig& c) {
  return estimate::run_estimate(job_request(c), cost::embedded_db()).estimate.step_time_us;
}

}  // namespace lumos::testing
