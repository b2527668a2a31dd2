#include "sweep/shard_merge.hpp"

#include <algorithm>
#include <sstream>

#include "common/error.hpp"
#include "common/format.hpp"
#include "sweep/sweep_spec.hpp"

namespace lumos::sweep {

CsvTable merge_shards(std::vector<CsvTable> parts) {
  LUMOS_EXPECT(!parts.empty(), "lumos pareto: give one or more variants CSVs");
  CsvTable all = std::move(parts.front());
  for (size_t p = 1; p < parts.size(); ++p) {
    CsvTable& t = parts[p];
    LUMOS_EXPECT(t.header == all.header, t.source + ": its columns differ from " + all.source +
                                             "'s; expected the same CSV kind");
    for (auto& row : t.rows) all.rows.push_back(std::move(row));
  }
  if (std::find(all.header.begin(), all.header.end(), "index") == all.header.end()) return all;
  // Shards' rows back in the sweep's order.
  const size_t col = all.column("index");
  std::vector<int64_t> key(all.rows.size());
  for (size_t i = 0; i < all.rows.size(); ++i)
    key[i] = static_cast<int64_t>(parse_count(
        all.rows[i][col], all.source + ":" + std::to_string(i + 2) + ": column 'index'"));
  std::vector<size_t> order(all.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return key[x] < key[y]; });
  for (size_t i = 1; i < order.size(); ++i)
    LUMOS_EXPECT(key[order[i]] != key[order[i - 1]],
                 "lumos pareto: configuration " + std::to_string(key[order[i]]) +
                     " is in the inputs twice (the same shard given twice?)");
  CsvTable sorted;
  sorted.source = all.source;
  sorted.header = all.header;
  sorted.rows.reserve(order.size());
  for (size_t i : order) sorted.rows.push_back(std::move(all.rows[i]));
  return sorted;
}

std::string stats_line(const SweepStats& s) {
  return strprintf(
      "%llu %llu %llu %llu %llu %.17g %.17g %.17g %.17g %.17g",
      static_cast<unsigned long long>(s.variants), static_cast<unsigned long long>(s.rows),
      static_cast<unsigned long long>(s.groups), static_cast<unsigned long long>(s.graphs),
      static_cast<unsigned long long>(s.estimated), s.build_s, s.price_s, s.replay_s, s.wait_s,
      s.total_s);
}

SweepStats add_stats(SweepStats sum, const std::string& line) {
  std::istringstream in(line);
  SweepStats s;
  in >> s.variants >> s.rows >> s.groups >> s.graphs >> s.estimated >> s.build_s >> s.price_s >>
      s.replay_s >> s.wait_s >> s.total_s;
  LUMOS_EXPECT(!in.fail(), "lumos sweep: a rank sent unreadable statistics");
  sum.variants = s.variants;
  sum.rows += s.rows, sum.groups += s.groups, sum.graphs += s.graphs;
  sum.estimated += s.estimated;
  sum.build_s += s.build_s, sum.price_s += s.price_s, sum.replay_s += s.replay_s;
  sum.wait_s += s.wait_s, sum.total_s = std::max(sum.total_s, s.total_s);
  return sum;
}

CsvTable merge_gathered(const std::vector<std::string>& parts, const std::string& source,
                        SweepStats* stats) {
  *stats = {};
  std::vector<CsvTable> tables;
  for (const std::string& part : parts) {
    const size_t eol = part.find('\n');
    *stats = add_stats(*stats, part.substr(0, eol));
    std::istringstream in(part.substr(eol + 1));
    tables.push_back(parse_csv(in, source));
  }
  return merge_shards(std::move(tables));
}

}  // namespace lumos::sweep
