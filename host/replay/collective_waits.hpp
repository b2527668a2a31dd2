// Who waited for whom in a replayed multi-rank job: each collective member's wait for the last
// arrival, each rank's iteration time and longest wait, the slowest rank, the straggler (the rank
// the others waited for most as the last arrival) and the spread of each collective's ends.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/multi_rank.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"

namespace lumos::replay {

struct CollectiveWaits {
  // Per rank (by index into MultiRankResult::ranks).
  std::vector<double> measured_us, replayed_us;  // its steps summed
  std::vector<int64_t> longest;                  // collective it waited on longest, -1 if none
  std::vector<double> longest_wait_us;
  // Per collective.
  std::vector<std::vector<double>> wait_us;  // per member, as replayed
  std::vector<size_t> last_arrival;          // rank index of the member that arrived last
  std::vector<double> end_spread_us;         // latest minus earliest replayed transfer end
  size_t slowest = 0;                        // rank index with the longest replayed time
  size_t straggler = 0;                      // rank index the others waited for most
  std::vector<double> waited_on_us;          // per rank: time others waited for it
  double max_wait_us(size_t k) const;
};

// Throws InputError when a step names a rank the job lacks.
CollectiveWaits collective_waits(const graph::MultiRankResult& m, const ReplayResult& r,
                                 const std::vector<StepTime>& steps);

}  // namespace lumos::replay
