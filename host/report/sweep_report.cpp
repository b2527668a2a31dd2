#include "report/sweep_report.hpp"

#include <algorithm>
#include <map>

#include "common/engineering.hpp"
#include "common/format.hpp"
#include "estimate/uncertainty.hpp"
#include "report/sweep_csv.hpp"
#include "report/sweep_headroom.hpp"

namespace lumos::report {

namespace {

// The numbers are read from the cells as the variants CSV holds them, so that the report of a
// sweep and of its shards merged print the same digits.
double number(const CsvView& t, size_t row, const char* column) {
  return std::stod(t.cell(row, t.column(column)));
}

// A reason's kind: its text before the first ':' or '(' ("does not fit: 95.1 GiB per GPU > 80.0
// GiB" is "does not fit"), so that rows dropped for one cause count together.
std::string reason_kind(const std::string& reason) {
  std::string k = reason.substr(0, reason.find_first_of(":("));
  while (!k.empty() && k.back() == ' ') k.pop_back();
  if (k == "does not fit") return "do not fit in memory";
  if (k == "invalid layout") return "break a layout rule";
  if (k == "graph too large to model") return "are too large to model";
  if (k == kTooTightReason) return "leave less memory free than --min-headroom";
  return "are not feasible (" + (k.empty() ? std::string("no reason given") : k) + ")";
}

// "84 of 144 configurations not shown: 81 do not fit in memory, 3 ...": every configuration not
// in the table of the fastest, by why.
void print_dropped(std::ostream& os, const CsvView& t, size_t feasible, size_t shown) {
  const std::vector<std::pair<std::string, size_t>> kinds = dropped_kinds(t, feasible, shown);
  os << strprintf("%zu of %zu configurations not shown", t.rows - shown, t.rows);
  for (size_t i = 0; i < kinds.size(); ++i)
    os << (i ? ", " : ": ") << kinds[i].second << ' ' << kinds[i].first;
  os << '\n';
}

void print_top(std::ostream& os, const SweepReport& rep, const CsvView& t,
               const std::vector<size_t>& front, int top) {
  const sweep::SweepStats& stats = rep.stats;
  const std::vector<size_t> ok = fastest_rows(t);
  std::vector<double> ttt(t.rows, 0.0);
  const size_t ttt_column = t.column("time_to_train_h");  // found once, not per row
  for (size_t i : ok) ttt[i] = std::stod(t.cell(i, ttt_column));
  os << strprintf(
      "%llu configurations (%llu in this shard): %llu estimated, %zu feasible, %zu on the "
      "Pareto front; %llu graphs built in %.2f s\n",
      static_cast<unsigned long long>(stats.variants), static_cast<unsigned long long>(stats.rows),
      static_cast<unsigned long long>(stats.estimated), ok.size(), front.size(),
      static_cast<unsigned long long>(stats.graphs), stats.total_s);
  const size_t shown = std::min<size_t>(static_cast<size_t>(std::max(top, 0)), ok.size());
  print_dropped(os, t, ok.size(), shown);
  if (ok.empty()) {
    os << "no configuration is feasible; the variants CSV says why for each\n";
    return;
  }
  auto cell = [&](size_t row, const char* column) { return t.cell(row, t.column(column)); };
  os << strprintf("fastest %d to train:\n", std::min<int>(top, static_cast<int>(ok.size())));
  // Engineering notation with the unit in each cell: one unit per quantity, as the front below.
  os << "  gpu      NIC(Gb/s)  gpus  tp cp pp   dp  v mbs  step(s)       throughput    MFU  "
        "train(h)  range train(h)   tie      GPU time     energy  operational CO2e  free  speed\n";
  const std::pair<double, double> best = train_range_h(rep, t, ok[0]);
  size_t ties = 0;
  for (int i = 0; i < top && i < static_cast<int>(ok.size()); ++i) {
    const size_t r = ok[static_cast<size_t>(i)];
    const std::pair<double, double> range = train_range_h(rep, t, r);
    const bool tie = i > 0 && best.second > 0 && ttt[r] <= best.second;
    ties += tie;
    const std::string range_text =
        range.second > 0 ? strprintf("%.1f-%.1f", range.first, range.second) : "-";
    const char* mark = i == 0 ? (best.second > 0 ? "best" : "") : tie ? "tie" : "";
    os << strprintf(
        "  %-8s %9s %5s %3s %2s %2s %4s %2s %3s %8.3f %16s %6.3f %9.1f %15s %5s %13s %10s %17s "
        "%4.0f%%  %s%s\n",
        cell(r, "gpu").c_str(), cell(r, "nic_gbps").c_str(), cell(r, "gpus").c_str(),
        cell(r, "tp").c_str(), cell(r, "cp").c_str(), cell(r, "pp").c_str(), cell(r, "dp").c_str(),
        cell(r, "interleave").c_str(), cell(r, "mbs").c_str(), number(t, r, "step_time_s"),
        engineering(number(t, r, "tokens_per_s"), "tokens/s").c_str(), number(t, r, "mfu"), ttt[r],
        range_text.c_str(), mark, engineering(number(t, r, "gpu_hours"), "GPU-h").c_str(),
        si(number(t, r, "energy_kwh") * 1e3, "Wh").c_str(),
        si(number(t, r, "operational_kg") / 1e3, "t CO2e").c_str(),
        100 * number(t, r, "headroom_fraction"), cell(r, "speed").c_str(),
        number(t, r, "headroom_fraction") < kTightHeadroom ? "  fits, tight" : "");
  }
  if (ties > 0)
    os << strprintf(
        "%zu of the shown tie with the fastest: their time to train lies inside its range (what "
        "the nearest published runs say the model's error can be), so the estimate cannot rank "
        "them\n",
        ties);
  if (front.empty()) return;
  os << "Pareto front (" << t.source << "):\n";
  for (size_t k = 0; k < front.size() && static_cast<int>(k) < top; ++k) {
    const size_t r = front[k];
    os << strprintf(
        "  %-8s %5s GPUs  tp %-2s cp %-2s pp %-2s dp %-4s v %-2s mbs %-2s  %8.1f h  %13s  %10s  "
        "%13s (%s)\n",
        cell(r, "gpu").c_str(), cell(r, "gpus").c_str(), cell(r, "tp").c_str(),
        cell(r, "cp").c_str(), cell(r, "pp").c_str(), cell(r, "dp").c_str(),
        cell(r, "interleave").c_str(), cell(r, "mbs").c_str(), number(t, r, "time_to_train_h"),
        engineering(number(t, r, "gpu_hours"), "GPU-h").c_str(),
        si(number(t, r, "energy_kwh") * 1e3, "Wh").c_str(),
        si(number(t, r, "operational_kg") / 1e3, "t CO2e").c_str(), cell(r, "region").c_str());
  }
}

}  // namespace

std::pair<double, double> train_range_h(const SweepReport& rep, const CsvView& t, size_t row) {
  if (!rep.db || !rep.model) return {0, 0};
  const double step_us = number(t, row, "step_time_s") * 1e6;
  const double params = static_cast<double>(
      model::parameter_counts(*rep.model, rep.model->vocab).total(rep.model->layers));
  const estimate::StepRange r =
      estimate::step_range(*rep.db, t.cell(row, t.column("gpu")), t.cell(row, t.column("stack")),
                           number(t, row, "gpus"), params, step_us);
  if (!r.known || step_us <= 0) return {0, 0};
  const double ttt = number(t, row, "time_to_train_h");
  return {ttt * r.low_us / step_us, ttt * r.high_us / step_us};
}

std::vector<size_t> fastest_rows(const CsvView& t) {
  const size_t feasible = t.column("feasible"), ttt_column = t.column("time_to_train_h");
  std::vector<size_t> ok;
  std::vector<double> ttt(t.rows, 0.0);
  for (size_t i = 0; i < t.rows; ++i)
    if (t.cell(i, feasible) == "1") ok.push_back(i), ttt[i] = std::stod(t.cell(i, ttt_column));
  std::stable_sort(ok.begin(), ok.end(), [&](size_t x, size_t y) { return ttt[x] < ttt[y]; });
  return ok;
}

std::vector<std::pair<std::string, size_t>> dropped_kinds(const CsvView& t, size_t feasible,
                                                          size_t shown) {
  std::map<std::string, size_t> by_kind;
  const size_t fc = t.column("feasible"), rc = t.column("reason");
  for (size_t i = 0; i < t.rows; ++i)
    if (t.cell(i, fc) != "1") ++by_kind[reason_kind(t.cell(i, rc))];
  std::vector<std::pair<std::string, size_t>> kinds(by_kind.begin(), by_kind.end());
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (feasible > shown)
    kinds.emplace_back("feasible but slower to train than the ones shown (--top; the CSV has all)",
                       feasible - shown);
  return kinds;
}

void print_sweep(std::ostream& os, const SweepReport& r) {
  const sweep::SweepStats& s = r.stats;
  print_top(os, r, *r.table, r.front, r.top);
  os << strprintf(
      "time: %.2f s wall (%.0f configurations/s); summed over threads%s: graphs %.2f s, pricing "
      "%.2f s, replay %.2f s, waiting for memory %.2f s\n",
      s.total_s, s.total_s > 0 ? s.rows / s.total_s : 0.0,
      r.ranks > 1 ? strprintf(" and %d ranks", r.ranks).c_str() : "", s.build_s, s.price_s,
      s.replay_s, s.wait_s);
  for (const std::string& path : r.wrote) os << "  wrote " << path << '\n';
}

}  // namespace lumos::report
