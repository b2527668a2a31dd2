// Renders a what-if answer: a table, JSON, or CSV (one row per variant).
#pragma once
#include <ostream>
#include <string>

#include "estimate/trace_whatif.hpp"

namespace lumos::report {

void whatif_text(std::ostream& os, const std::string& input, const estimate::WhatifAnswer& a);
void whatif_json(std::ostream& os, const std::string& input, const estimate::WhatifAnswer& a);
void whatif_csv(std::ostream& os, const estimate::WhatifAnswer& a);

}  // namespace lumos::report
