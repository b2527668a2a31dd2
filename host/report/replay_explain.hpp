// The parts of a replay report that say why a step took its time: the GPU's idle split, the
// kernels and CPU operators that took the most time, the critical path in words, and the
// per-rank breakdown of a multi-rank job. Shared by the one-rank and the job reports.
#pragma once
#include <ostream>
#include <vector>

#include "common/json_writer.hpp"
#include "graph/graph.hpp"
#include "replay/critical_path.hpp"
#include "replay/gpu_idle.hpp"
#include "replay/rank_windows.hpp"
#include "replay/reference_replay.hpp"
#include "replay/top_ops.hpp"

namespace lumos::report {

void idle_split_text(std::ostream& os, const replay::IdleSplit& s, double window_us);
void idle_split_json(common::JsonWriter& w, const replay::IdleSplit& s);

// `busy_us` (> 0) adds each op's share of it.
void top_ops_text(std::ostream& os, const char* title, const std::vector<replay::OpTotal>& ops,
                  double busy_us);
void top_ops_json(common::JsonWriter& w, const std::vector<replay::OpTotal>& ops);

// The steps' window: from the first step's replayed start to the last step's replayed end.
struct Window {
  double begin_us = 0, end_us = 0;
};
Window steps_window(const graph::Graph& g, const replay::ReplayResult& r,
                    const std::vector<replay::StepTime>& steps);

// The path's time by part, in words, and why it spans less than the steps' window.
void critical_path_text(std::ostream& os, const replay::ReplayResult& r,
                        const replay::CriticalPath& cp, const Window& w);

void rank_windows_text(std::ostream& os, const std::vector<replay::RankWindows>& ranks);
void rank_windows_json(common::JsonWriter& w, const std::vector<replay::RankWindows>& ranks);

}  // namespace lumos::report
