// The order in which one pipeline stage runs its forward and backward passes, as Megatron's
// schedules issue them (megatron/core/pipeline_parallel/schedules.py): 1F1B with
// min(p - stage - 1, m) warm-up forwards, and interleaved 1F1B over v model chunks per stage
// with (p - stage - 1) * 2 + (v - 1) * p warm-up forwards (all forwards first when m = p).
// Also the peak number of micro-batches whose activations a stage holds, in units of the stage's
// layers (a chunk holds 1/v of them).
#pragma once
#include <cstdint>
#include <vector>

namespace lumos::model {

struct PipelineTask {
  bool forward = true;
  int64_t microbatch = 0;
  int chunk = 0;  // model chunk on this stage; virtual stage = chunk * p + stage
};

std::vector<PipelineTask> stage_schedule(int stage, int pp, int interleave, int64_t microbatches);

double inflight_microbatches(int stage, int pp, int interleave, int64_t microbatches);

}  // namespace lumos::model
