// Parses sizes with units as users write them: 4096, 1e9, 512KiB, 64MiB, 1GiB, 1GB (decimal).
#pragma once
#include <string>

namespace lumos::cost {

// Throws InputError naming `what` when the text is not a non-negative size.
double parse_bytes(const std::string& text, const std::string& what);

}  // namespace lumos::cost
