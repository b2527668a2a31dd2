#include "model/pipeline_schedule.hpp"

#include <algorithm>

namespace lumos::model {

double inflight_microbatches(int stage, int pp, int interleave, int64_t microbatches) {
  const int64_t p = pp, v = interleave, m = microbatches;
  if (v == 1) return static_cast<double>(std::min<int64_t>(m, p - stage));
  // Chunk forwards outstanding at the peak: the warm-up plus the first steady-state forward.
  const int64_t warmup = m == p ? m * v : (p - stage - 1) * 2 + (v - 1) * p;
  return static_cast<double>(std::min<int64_t>(m * v, warmup + 1)) / static_cast<double>(v);
}

std::vector<PipelineTask> stage_schedule(int stage, int pp, int interleave, int64_t microbatches) {
  const int64_t p = pp, v = interleave, m = microbatches;
  const int64_t total = m * v;
  int64_t warmup = 0;
  if (v == 1)
    warmup = std::min<int64_t>(p - stage - 1, m);
  else if (m == p)  // Megatron runs every forward first when micro-batches equal stages
    warmup = total;
  else
    warmup = std::min<int64_t>((p - stage - 1) * 2 + (v - 1) * p, total);
  // Megatron's mapping from the k-th (forward or backward) virtual micro-batch to its chunk and
  // micro-batch: groups of p micro-batches walk the chunks in order (forward) or in reverse.
  auto task = [&](int64_t k, bool fwd) {
    PipelineTask t;
    t.forward = fwd;
    const int64_t in_group = k % (p * v);
    const int64_t chunk = in_group / p;
    t.chunk = static_cast<int>(fwd ? chunk : v - 1 - chunk);
    t.microbatch = (k / (p * v)) * p + k % p;
    if (v == 1) t.microbatch = k, t.chunk = 0;
    return t;
  };
  std::vector<PipelineTask> out;
  out.reserve(static_cast<size_t>(2 * total));
  int64_t f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(task(f, true));
  while (f < total) {
    out.push_back(task(f++, true));
    out.push_back(task(b++, false));
  }
  while (b < total) out.push_back(task(b++, false));
  return out;
}

}  // namespace lumos::model
