#include "replay/pareto.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "common/error.hpp"

namespace lumos::replay {

std::vector<uint32_t> pareto_front(const std::vector<std::vector<double>>& obj) {
  LUMOS_EXPECT(obj.size() == 2 || obj.size() == 3, "pareto: expected two or three objectives");
  const size_t n = obj[0].size();
  for (const auto& o : obj) LUMOS_EXPECT(o.size() == n, "pareto: objectives differ in length");
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  // Sort by the objectives lexicographically: a dominating point always comes first.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    for (const auto& o : obj)
      if (o[a] != o[b]) return o[a] < o[b];
    return false;
  });
  std::vector<uint32_t> front;
  if (obj.size() == 2) {
    // Scan by the first objective: a point survives when its second objective beats every point
    // with a smaller first objective, and it is the best of its own first-objective group.
    double best_before = std::numeric_limits<double>::infinity();
    size_t i = 0;
    while (i < n) {
      size_t j = i;
      while (j < n && obj[0][order[j]] == obj[0][order[i]]) ++j;
      const double group_min = obj[1][order[i]];  // sorted: the group's first has the least
      if (group_min < best_before)
        for (size_t k = i; k < j && obj[1][order[k]] == group_min; ++k) front.push_back(order[k]);
      best_before = std::min(best_before, group_min);
      i = j;
    }
  } else {
    // Three objectives: compare each point with the front so far (sorted order guarantees that
    // a dominator is already there).
    for (uint32_t v : order) {
      bool dominated = false;
      for (uint32_t f : front) {
        const bool le = obj[0][f] <= obj[0][v] && obj[1][f] <= obj[1][v] && obj[2][f] <= obj[2][v];
        const bool lt = obj[0][f] < obj[0][v] || obj[1][f] < obj[1][v] || obj[2][f] < obj[2][v];
        if (le && lt) {
          dominated = true;
          break;
        }
      }
      if (!dominated) front.push_back(v);
    }
  }
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace lumos::replay
