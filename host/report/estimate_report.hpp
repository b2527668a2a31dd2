// Renders model-driven estimates: text and JSON (layout searches: report/search_report.hpp).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "common/json_writer.hpp"
#include "estimate/estimate.hpp"

namespace lumos::report {

void estimate_text(std::ostream& os, const estimate::Estimate& e);
// The estimate's fields, written into an object the caller opened.
void estimate_fields(common::JsonWriter& w, const estimate::Estimate& e);
// `files`: traces written by `lumos generate`, listed when not empty.
void estimate_json(std::ostream& os, const estimate::Estimate& e,
                   const std::vector<std::string>& files);

}  // namespace lumos::report
