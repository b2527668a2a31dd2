// Small statistics over samples.
#pragma once
#include <algorithm>
#include <vector>

namespace lumos {

// The upper median (the element at size/2 once sorted); 0 for no samples. Upper, not the mean
// of the two middle ones, so that the answer is always one of the samples.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace lumos
