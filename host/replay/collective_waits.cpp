#include "replay/collective_waits.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"

namespace lumos::replay {

double CollectiveWaits::max_wait_us(size_t k) const {
  return *std::max_element(wait_us[k].begin(), wait_us[k].end());
}

CollectiveWaits collective_waits(const graph::MultiRankResult& m, const ReplayResult& r,
                                 const std::vector<StepTime>& steps) {
  const size_t R = m.ranks.size(), K = m.collectives.size();
  auto rank_index = [&](int32_t rank) {
    for (size_t i = 0; i < R; ++i)
      if (m.ranks[i] == rank) return i;
    throw InputError("lumos replay: no rank " + std::to_string(rank) + " among the " +
                     std::to_string(R) + " traces");
  };
  CollectiveWaits w;
  w.measured_us.assign(R, 0);
  w.replayed_us.assign(R, 0);
  for (const auto& s : steps) {
    const size_t i = rank_index(s.rank);
    w.measured_us[i] += s.measured_us, w.replayed_us[i] += s.replayed_us;
  }
  // Waits as replayed (equal to the measured ones unless a what-if moved the arrivals).
  w.wait_us.resize(K);
  for (size_t k = 0; k < K; ++k) {
    double last = -std::numeric_limits<double>::infinity();
    for (graph::NodeId a : m.collectives[k].arrive) last = std::max(last, r.start_us[a]);
    for (graph::NodeId a : m.collectives[k].arrive) w.wait_us[k].push_back(last - r.start_us[a]);
  }
  w.longest.assign(R, -1);
  w.longest_wait_us.assign(R, -1);
  for (size_t k = 0; k < K; ++k)
    for (size_t j = 0; j < w.wait_us[k].size(); ++j) {
      const size_t i = m.collectives[k].rank_index[j];
      if (w.wait_us[k][j] > w.longest_wait_us[i])
        w.longest_wait_us[i] = w.wait_us[k][j], w.longest[i] = static_cast<int64_t>(k);
    }
  // The member that waited least arrived last.
  w.last_arrival.resize(K);
  for (size_t k = 0; k < K; ++k) {
    const auto& x = w.wait_us[k];
    w.last_arrival[k] =
        m.collectives[k]
            .rank_index[static_cast<size_t>(std::min_element(x.begin(), x.end()) - x.begin())];
  }
  w.slowest = static_cast<size_t>(std::max_element(w.replayed_us.begin(), w.replayed_us.end()) -
                                  w.replayed_us.begin());
  w.waited_on_us.assign(R, 0);
  for (size_t k = 0; k < K; ++k)
    for (double x : w.wait_us[k]) w.waited_on_us[w.last_arrival[k]] += x;
  w.straggler = static_cast<size_t>(std::max_element(w.waited_on_us.begin(), w.waited_on_us.end()) -
                                    w.waited_on_us.begin());
  w.end_spread_us.assign(K, 0);
  for (size_t k = 0; k < K; ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (graph::NodeId t : m.collectives[k].transfer)
      lo = std::min(lo, r.finish_us[t]), hi = std::max(hi, r.finish_us[t]);
    w.end_spread_us[k] = hi - lo;
  }
  return w;
}

}  // namespace lumos::replay
