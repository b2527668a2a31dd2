#include "common/did_you_mean.hpp"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace lumos {

namespace {

char folded(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table (the one before the previous, for swaps).
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = folded(a[i - 1]) == folded(b[j - 1]);
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && folded(a[i - 1]) == folded(b[j - 2]) &&
          folded(a[i - 2]) == folded(b[j - 1]))
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
}

std::string nearest_name(std::string_view wrong, const std::vector<std::string>& known) {
  const size_t limit = std::clamp<size_t>(wrong.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& name : known) {
    const size_t d = edit_distance(wrong, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  return best;
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& known) {
  const std::string near = nearest_name(wrong, known);
  return near.empty() ? std::string() : " (did you mean '" + near + "'?)";
}

}  // namespace lumos
