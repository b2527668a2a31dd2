// "Did you mean" for a mistyped name (an option, a command, a preset, a GPU, a region): the known
// name nearest to it by edit distance, when one is near enough to be a typo and not a guess.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace lumos {

// Edit distance counting insertions, deletions, substitutions and swaps of two neighbouring
// characters (the commonest typo: "serach"), ignoring ASCII case.
size_t edit_distance(std::string_view a, std::string_view b);

// The name in `known` nearest to `wrong`, or "" when none is within a third of its length (at least
// one edit, at most three): a long wrong name has room for more typos, a short one for fewer.
std::string nearest_name(std::string_view wrong, const std::vector<std::string>& known);

// " (did you mean 'NAME'?)" for the nearest name, or "" when none is near: appended to an error.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& known);

}  // namespace lumos
