#include "replay/utilization_bins.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos::replay {

namespace {

bool is_gpu_work(const graph::Graph& g, graph::NodeId v) {
  const graph::NodeKind k = g.kind[v];
  return (k == graph::NodeKind::kKernel || k == graph::NodeKind::kMemcpy ||
          k == graph::NodeKind::kMemset) &&
         g.resource[v] != graph::kNoResource && g.dur_us[v] > 0;
}

}  // namespace

std::vector<double> busy_fractions(std::vector<Interval> intervals, double bin_us, size_t bins) {
  std::vector<double> busy(bins, 0.0);
  std::sort(intervals.begin(), intervals.end());
  auto add = [&](double a, double b) {  // one interval of the union
    a = std::max(a, 0.0);
    b = std::min(b, bin_us * static_cast<double>(bins));
    if (b <= a) return;
    const auto first = static_cast<size_t>(a / bin_us);
    const auto last = std::min(bins - 1, static_cast<size_t>(b / bin_us));
    for (size_t i = first; i <= last; ++i) {
      const double lo = std::max(a, bin_us * static_cast<double>(i));
      const double hi = std::min(b, bin_us * static_cast<double>(i + 1));
      if (hi > lo) busy[i] += hi - lo;
    }
  };
  bool open = false;
  double a = 0, b = 0;
  for (const auto& [s, e] : intervals) {
    if (e <= s) continue;
    if (open && s <= b) {
      b = std::max(b, e);
      continue;
    }
    if (open) add(a, b);
    a = s, b = e, open = true;
  }
  if (open) add(a, b);
  for (double& x : busy) x = std::min(1.0, x / bin_us);
  return busy;
}

std::vector<UtilizationSeries> utilization_bins(const graph::Graph& g, const ReplayResult& r,
                                                double bin_us) {
  LUMOS_EXPECT(bin_us > 0 && std::isfinite(bin_us), "utilization: the bin must be positive");
  std::map<int32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> by_rank;
  double end_us = 0;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (!is_gpu_work(g, v)) continue;
    auto& [traced, replayed] = by_rank[g.resources[g.resource[v]].rank];
    traced.emplace_back(g.measured_start_us[v], g.measured_finish_us(v));
    replayed.emplace_back(r.start_us[v], r.finish_us[v]);
    end_us = std::max({end_us, g.measured_finish_us(v), r.finish_us[v]});
  }
  const double n = std::ceil(end_us / bin_us);
  // The narrowest bin that fits, rounded up to three digits so that it does fit as printed.
  const double fits_us = end_us / static_cast<double>(kMaxUtilizationBins);
  const double digit = fits_us > 0 ? std::pow(10.0, std::floor(std::log10(fits_us)) - 2) : 1;
  LUMOS_EXPECT(
      n <= static_cast<double>(kMaxUtilizationBins),
      strprintf("utilization: %.3g bins of %g us over the %.0f us timeline; at most %zu "
                "(use a bin of at least %.3g us)",
                n, bin_us, end_us, kMaxUtilizationBins, std::ceil(fits_us / digit) * digit));
  const auto bins = std::max<size_t>(1, static_cast<size_t>(n));
  std::vector<UtilizationSeries> out;
  for (auto& [rank, iv] : by_rank) {
    UtilizationSeries s;
    s.rank = rank;
    s.bin_us = bin_us;
    s.traced = busy_fractions(std::move(iv.first), bin_us, bins);
    s.replayed = busy_fractions(std::move(iv.second), bin_us, bins);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace lumos::replay
