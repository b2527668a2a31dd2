#include "report/utilization_csv.hpp"

#include "common/format.hpp"

namespace lumos::report {

void utilization_csv(std::ostream& os, const std::vector<replay::UtilizationSeries>& series) {
  os << "rank,bin_start_us,bin_end_us,traced_busy_fraction,replayed_busy_fraction\n";
  for (const auto& s : series)
    for (size_t i = 0; i < s.traced.size(); ++i)
      os << strprintf("%d,%.3f,%.3f,%.6f,%.6f\n", s.rank, s.bin_us * static_cast<double>(i),
                      s.bin_us * static_cast<double>(i + 1), s.traced[i], s.replayed[i]);
}

}  // namespace lumos::report
