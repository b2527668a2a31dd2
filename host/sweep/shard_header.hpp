// Which sweep a shard's CSV came from: `lumos sweep --shard i/n` writes one line before the CSV
// header of its variants and front files,
//   #lumos-sweep version=0.1.0 sweep=9f86d081884c7d65 configurations=2880 shard=0/2 rows=1440
//   kind=variants
// (docs/reference/outputs.md), so that `lumos pareto` can refuse a partial set of shards, a
// shard given twice, shards of two sweeps, or a front given where variants are merged.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lumos::sweep {

struct ShardHeader {
  std::string version;          // lumos's
  std::string sweep;            // sweep_fingerprint of what defines the sweep
  uint64_t configurations = 0;  // of the whole sweep
  uint32_t shard = 0, shards = 1;
  uint64_t rows = 0;   // in this file
  bool front = false;  // a Pareto front (--pareto), not the variants (-o)
};

// How the line starts; a CSV reader skips lines starting with '#' before the header.
constexpr const char* kShardHeaderTag = "#lumos-sweep";

// 16 hex digits of a 64-bit FNV-1a hash of `description` (the model, the axes, the tokens): equal
// for the shards of one sweep, different for another sweep but by chance.
std::string sweep_fingerprint(const std::string& description);

std::string shard_header_line(const ShardHeader& h);  // without the newline

// The header among a CSV's comment lines (those before its column names), if one starts with
// kShardHeaderTag. Throws InputError naming `source` for a header that does not parse.
std::optional<ShardHeader> find_shard_header(const std::vector<std::string>& comments,
                                             const std::string& source);

// One input of `lumos pareto`: its file, its shard header (none for a CSV that is not a shard's)
// and its row count.
struct ShardInput {
  std::string source;
  std::optional<ShardHeader> header;
  uint64_t rows = 0;
};

// Throws InputError (one line) unless the inputs are all plain CSVs, or all shards' CSVs of one
// sweep (same version, fingerprint, configurations and split) that hold every shard 0..n-1 once,
// each with the rows its header counts. With `merge`, a Pareto front is refused too (--merge
// joins variants; the front of the shards' fronts is the sweep's front, so fronts are otherwise
// accepted).
void check_shard_set(const std::vector<ShardInput>& inputs, bool merge);

}  // namespace lumos::sweep
