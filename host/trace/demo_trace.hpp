// The embedded default: a small trace of a data-parallel training loop that lumos generates
// itself (forward and backward GEMMs on a compute stream, a gradient all-reduce on a NCCL stream
// joined by event record/wait, an optimizer step and a loss.item() sync per ProfilerStep), so
// that `lumos replay` runs with no input. Consistent by construction: GPU ops start when their
// launch, their stream and their waits allow.
#pragma once
#include <string>

namespace lumos::trace {

struct DemoOptions {
  int steps = 3;
  int layers = 6;
  double gemm_us = 120;       // forward GEMM; backward is twice this
  double allreduce_us = 900;  // gradient all-reduce per step
  double launch_latency_us = 5;
};

// Kineto JSON text of the demo trace.
std::string demo_trace_json(const DemoOptions& opt = {});

}  // namespace lumos::trace
