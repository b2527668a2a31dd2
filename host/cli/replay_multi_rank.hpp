// The multi-rank branch of `lumos replay` (input is a folder of per-rank traces).
#pragma once
#include <string>
#include <vector>

namespace lumos::cli {

struct MultiRankOptions {
  bool json = false;
  std::string timeline;
  std::vector<std::string> slow_ranks;  // "R:FACTOR"
  std::vector<std::string> skews;       // "R:US"
};

int replay_multi_rank(const std::string& dir, const MultiRankOptions& o);

}  // namespace lumos::cli
