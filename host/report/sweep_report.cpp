#include "report/sweep_report.hpp"

#include <algorithm>

#include "common/engineering.hpp"
#include "common/format.hpp"

namespace lumos::report {

namespace {

// The numbers are read from the cells as the variants CSV holds them, so that the report of a
// sweep and of its shards merged print the same digits.
double number(const CsvView& t, size_t row, const char* column) {
  return std::stod(t.cell(row, t.column(column)));
}

void print_top(std::ostream& os, const sweep::SweepStats& stats, const CsvView& t,
               const std::vector<size_t>& front, int top) {
  const size_t feasible = t.column("feasible");
  std::vector<size_t> ok;
  for (size_t i = 0; i < t.rows; ++i)
    if (t.cell(i, feasible) == "1") ok.push_back(i);
  std::vector<double> ttt(t.rows, 0.0);
  for (size_t i : ok) ttt[i] = number(t, i, "time_to_train_h");
  std::stable_sort(ok.begin(), ok.end(), [&](size_t x, size_t y) { return ttt[x] < ttt[y]; });
  os << strprintf(
      "%llu configurations (%llu in this shard): %llu estimated, %zu feasible, %zu on the "
      "Pareto front; %llu graphs built in %.2f s\n",
      static_cast<unsigned long long>(stats.variants), static_cast<unsigned long long>(stats.rows),
      static_cast<unsigned long long>(stats.estimated), ok.size(), front.size(),
      static_cast<unsigned long long>(stats.graphs), stats.total_s);
  if (ok.empty()) {
    os << "no configuration is feasible; the variants CSV says why for each\n";
    return;
  }
  auto cell = [&](size_t row, const char* column) { return t.cell(row, t.column(column)); };
  os << strprintf("fastest %d to train:\n", std::min<int>(top, static_cast<int>(ok.size())));
  // Engineering notation with the unit in each cell: one unit per quantity, as the front below.
  os << "  gpu      NIC(Gb/s)  gpus  tp cp pp   dp  v mbs  step(s)       throughput    MFU  "
        "train(h)      GPU time     energy  operational CO2e  speed\n";
  for (int i = 0; i < top && i < static_cast<int>(ok.size()); ++i) {
    const size_t r = ok[static_cast<size_t>(i)];
    os << strprintf(
        "  %-8s %9s %5s %3s %2s %2s %4s %2s %3s %8.3f %16s %6.3f %9.1f %13s %10s %17s  %s\n",
        cell(r, "gpu").c_str(), cell(r, "nic_gbps").c_str(), cell(r, "gpus").c_str(),
        cell(r, "tp").c_str(), cell(r, "cp").c_str(), cell(r, "pp").c_str(), cell(r, "dp").c_str(),
        cell(r, "interleave").c_str(), cell(r, "mbs").c_str(), number(t, r, "step_time_s"),
        engineering(number(t, r, "tokens_per_s"), "tokens/s").c_str(), number(t, r, "mfu"), ttt[r],
        engineering(number(t, r, "gpu_hours"), "GPU-h").c_str(),
        si(number(t, r, "energy_kwh") * 1e3, "Wh").c_str(),
        si(number(t, r, "operational_kg") / 1e3, "t CO2e").c_str(), cell(r, "speed").c_str());
  }
  if (front.empty()) return;
  os << "Pareto front (" << t.source << "):\n";
  for (size_t k = 0; k < front.size() && static_cast<int>(k) < top; ++k) {
    const size_t r = front[k];
    os << strprintf("  %-8s %5s GPUs  tp %-2s pp %-2s dp %-4s  %8.1f h  %13s  %10s  %13s (%s)\n",
                    cell(r, "gpu").c_str(), cell(r, "gpus").c_str(), cell(r, "tp").c_str(),
                    cell(r, "pp").c_str(), cell(r, "dp").c_str(), number(t, r, "time_to_train_h"),
                    engineering(number(t, r, "gpu_hours"), "GPU-h").c_str(),
                    si(number(t, r, "energy_kwh") * 1e3, "Wh").c_str(),
                    si(number(t, r, "operational_kg") / 1e3, "t CO2e").c_str(),
                    cell(r, "region").c_str());
  }
}

}  // namespace

void print_sweep(std::ostream& os, const SweepReport& r) {
  const sweep::SweepStats& s = r.stats;
  print_top(os, s, *r.table, r.front, r.top);
  os << strprintf(
      "time: %.2f s wall (%.0f configurations/s); summed over threads%s: graphs %.2f s, pricing "
      "%.2f s, replay %.2f s, waiting for memory %.2f s\n",
      s.total_s, s.total_s > 0 ? s.rows / s.total_s : 0.0,
      r.ranks > 1 ? strprintf(" and %d ranks", r.ranks).c_str() : "", s.build_s, s.price_s,
      s.replay_s, s.wait_s);
  for (const std::string& path : r.wrote) os << "  wrote " << path << '\n';
}

}  // namespace lumos::report
