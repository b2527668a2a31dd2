// GPU utilization per time interval, as Lumos's Figure 6 plots it: the fraction of each bin in
// which at least one stream of a rank's GPU runs a kernel, memcpy or memset (the union of their
// intervals, so overlapping streams count once), for the traced and the replayed timeline on one
// grid of bins from the graph's origin. GPU busy time, not SM occupancy.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::replay {

using Interval = std::pair<double, double>;  // [start, end) in microseconds

// Busy fraction of each of `bins` bins of bin_us from 0: the union of the intervals (any order,
// overlapping or not) inside each bin, over bin_us. The last bin counts its full width.
std::vector<double> busy_fractions(std::vector<Interval> intervals, double bin_us, size_t bins);

struct UtilizationSeries {
  int32_t rank = 0;
  double bin_us = 0;
  std::vector<double> traced, replayed;  // per bin from the graph's origin
};

// One series per rank of the graph, over as many bins as the later of the traced and the
// replayed GPU work needs. Throws InputError unless bin_us > 0, or when the grid would exceed
// kMaxUtilizationBins bins.
inline constexpr size_t kMaxUtilizationBins = 1'000'000;  // 1ms bins over 1000 s
std::vector<UtilizationSeries> utilization_bins(const graph::Graph& g, const ReplayResult& r,
                                                double bin_us);

}  // namespace lumos::replay
