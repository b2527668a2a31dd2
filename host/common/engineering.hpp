// Numbers in human-readable tables in engineering notation: three significant digits and an SI
// prefix (k, M, G, T, P), with the unit written once, so that 1e+06 and 9.759e+05 read as
// "1.00 M tokens/s" and "976 k tokens/s" (docs/design.md, "Outputs"). Files (CSV, JSON) keep plain
// numbers in one fixed unit; these are for people.
#pragma once
#include <string>

namespace lumos {

// A count or a rate with its unit after a space: "1.00 M tokens/s", "85.3 k GPU-h", "512 GPUs".
// Values under 1000 take no prefix; non-finite values print as "-".
std::string engineering(double value, const std::string& unit);

// A physical quantity in its base unit with the prefix joined to the unit: 1.05e8 Wh ->
// "105 MWh", 3.2e6 g -> "3.20 Mg" (callers choose units whose prefixes read well).
std::string si(double value, const std::string& unit);

}  // namespace lumos
