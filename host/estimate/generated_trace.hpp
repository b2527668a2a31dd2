// Writes a replayed model-driven iteration as Kineto traces, one file per pipeline stage (the
// stage's representative rank), which `lumos replay DIR` reads back as a multi-rank job and
// Perfetto displays. Pipeline messages carry NCCL arguments (process group, sequence number) so
// that the two sides meet again when the folder is replayed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/progress.hpp"
#include "model/step_graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::estimate {

using model::StepGraph;

// What the written traces take per graph node, a little above the 350 to 400 bytes measured on
// GPT and Llama layouts: the size `lumos generate` estimates before it builds anything.
constexpr double kTraceBytesPerNode = 400;

// Throws InputError when a graph of `nodes` nodes would write more than `max_bytes` of traces.
void check_trace_bytes(uint64_t nodes, double max_bytes);

struct StageTraceOptions {
  // Process groups named as PyTorch numbers them when the job does not name them ("0", "1", ...,
  // described "undefined") instead of by role ("tp/stage0"): traces whose groups say nothing
  // of what they are for, as many real jobs write them.
  bool numbered_groups = false;
  ProgressFn progress;  // stages written of all (common/progress.hpp)
};

// Kineto JSON of one stage.
std::string stage_trace_json(const StepGraph& sg, const replay::ReplayResult& r, int stage,
                             const std::string& gpu_name, const StageTraceOptions& opt = {});

// Writes <out>/stage<k>.rank<r>.json for every stage, all at once: into a temporary folder
// beside `out`, renamed to `out` at the end, so that `out` holds every stage or does not exist.
// `out` must be missing or an empty folder (InputError otherwise: nothing is replaced). Each
// trace lists the stage ranks as the job's traced ranks. Returns the paths written. SIGINT or
// SIGTERM while it writes removes the temporary folder (common/temp_folder.hpp); temporary
// folders of `out` left by processes that no longer run (SIGKILL) are removed first.
std::vector<std::string> write_stage_traces(const StepGraph& sg, const replay::ReplayResult& r,
                                            const std::string& out, const std::string& gpu_name,
                                            const StageTraceOptions& opt = {});

}  // namespace lumos::estimate
