// The execution breakdown (replay::Breakdown) as JSON and as a text line; shared by the replay
// and estimate reports.
#pragma once
#include <ostream>

#include "common/json_writer.hpp"
#include "replay/step_report.hpp"

namespace lumos::report {

void breakdown_json(common::JsonWriter& w, const replay::Breakdown& b);

// "label  exposed compute X us (P%)  overlapped ...": shares of the window.
void breakdown_line(std::ostream& os, const char* label, const replay::Breakdown& b);

}  // namespace lumos::report
