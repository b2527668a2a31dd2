// Renders `lumos estimate --explain`: every named term of the model-driven step, its value, its
// source in kernels_db and what it added to the step (estimate/term_effects.hpp).
#pragma once
#include <ostream>
#include <vector>

#include "common/json_writer.hpp"
#include "estimate/term_effects.hpp"

namespace lumos::report {

void terms_text(std::ostream& os, const std::vector<estimate::TermEffect>& terms, double step_us);
// A "terms" array, written into an object the caller opened.
void terms_json(common::JsonWriter& w, const std::vector<estimate::TermEffect>& terms);

}  // namespace lumos::report
