// Renders `lumos carbon`'s answer: the run, its power and energy by part, the grid, operational
// carbon (and the best start), embodied carbon beside it; as text or JSON.
#pragma once
#include <ostream>

#include "estimate/training_carbon.hpp"

namespace lumos::cost {
struct CarbonParams;
}

namespace lumos::report {

// `p`: the embodied carbon and lifetime the account used.
void carbon_text(std::ostream& os, const estimate::CarbonAnswer& a, const cost::CarbonParams& p);
void carbon_json(std::ostream& os, const estimate::CarbonAnswer& a);

}  // namespace lumos::report
