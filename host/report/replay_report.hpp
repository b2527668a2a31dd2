// Renders `lumos replay` answers: one rank's replay (text or JSON) and a multi-rank job's.
#pragma once
#include <ostream>
#include <string>

#include "estimate/trace_replay.hpp"

namespace lumos::report {

void replay_text(std::ostream& os, const graph::LoadedInput& in, const estimate::ReplayAnswer& a);
void replay_json(std::ostream& os, const graph::LoadedInput& in, const estimate::ReplayAnswer& a);

// The text lists every collective up to kAllCollectives, else the kTopCollectives with the
// longest waits (a pipelined job has thousands); JSON lists all.
constexpr size_t kAllCollectives = 40, kTopCollectives = 20;
void job_text(std::ostream& os, const std::string& dir, const estimate::JobReplay& j);
void job_json(std::ostream& os, const std::string& dir, const estimate::JobReplay& j);

}  // namespace lumos::report
