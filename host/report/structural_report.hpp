// Renders a structural what-if of a traced job: the traced configuration found, the edits, how
// the calibrated model of the traced configuration compares with the trace, then the edited
// configuration in the form of `lumos estimate`.
#pragma once
#include <ostream>
#include <string>

#include "estimate/trace_structural.hpp"

namespace lumos::report {

void structural_text(std::ostream& os, const std::string& input,
                     const estimate::StructuralAnswer& a);
void structural_json(std::ostream& os, const std::string& input,
                     const estimate::StructuralAnswer& a);

}  // namespace lumos::report
