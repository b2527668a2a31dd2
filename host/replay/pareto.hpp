// Pareto front of variants over two or three objectives, all minimised. A variant is on the
// front when no other variant is at least as good in every objective and better in one; exact
// duplicates of a front point are all kept. Indices come back in ascending order.
#pragma once
#include <cstdint>
#include <vector>

namespace lumos::replay {

// objectives[k][v]: objective k of variant v. Two or three objectives; throws InputError otherwise.
std::vector<uint32_t> pareto_front(const std::vector<std::vector<double>>& objectives);

}  // namespace lumos::replay
