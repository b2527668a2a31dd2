// Reads the echo-nccl-tests logs (nccl-tests all_reduce_perf output) for the collective tests.
#pragma once
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace lumos::testing {

struct NcclTestRow {
  double bytes = 0;
  double time_us = 0;  // out-of-place (in-place on one rank is a no-op)
};

inline std::vector<NcclTestRow> read_nccl_tests_log(const std::string& path) {
  std::vector<NcclTestRow> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(">:");
    if (colon != std::string::npos) line = line.substr(colon + 2);
    std::istringstream ss(line);
    double size, count, t1, bw1, bus1, t2, bw2, bus2;
    std::string type, op, err1, err2;
    if (!(ss >> size >> count >> type >> op >> t1 >> bw1 >> bus1 >> err1 >> t2 >> bw2 >> bus2 >>
          err2))
      continue;
    if (op != "sum") continue;
    rows.push_back({size, t1});
  }
  return rows;
}

// Time cannot fall as messages grow: a row more than 1.5x slower than some larger message of the
// same log is warm-up noise, not the collective's cost.
inline bool is_noisy(const std::vector<NcclTestRow>& rows, size_t i) {
  for (size_t j = i + 1; j < rows.size(); ++j)
    if (rows[j].bytes > rows[i].bytes && rows[i].time_us > 1.5 * rows[j].time_us) return true;
  return false;
}

}  // namespace lumos::testing
