// Counts and name lists as written on a command line: one parser for every count option, so that
// no value wraps (5000000000 given for a 32-bit count is refused, not read as 705032704), every
// range is checked in one place and stated the same way, and one splitter for comma-separated
// names that refuses an empty name instead of dropping it (docs/design.md, "Interfaces").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lumos::common {

// A whole number in [min, max] written in decimal (an optional sign, then digits only). Throws
// InputError "WHAT must be between MIN and MAX (got N)" when it is outside, and "WHAT: expected a
// whole number between MIN and MAX, got 'TEXT'" when it is not one (or beyond int64).
int64_t parse_count(const std::string& text, const std::string& what, int64_t min, int64_t max);

// "MIN to MAX": how --help states a count's range.
std::string count_range_text(int64_t min, int64_t max);

// The comma-separated names of `text`, in order. Throws InputError "WHAT: an empty name in
// 'TEXT'" for an empty text or an empty item (h100,,a100 or a trailing comma).
std::vector<std::string> parse_name_list(const std::string& text, const std::string& what);

}  // namespace lumos::common
