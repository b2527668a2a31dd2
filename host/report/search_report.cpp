#include "report/search_report.hpp"

#include <map>
#include <string>
#include <vector>

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/breakdown_report.hpp"
#include "report/sweep_csv.hpp"

namespace lumos::report {

using namespace lumos::estimate;
using model::to_string;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double headroom(const SearchResult& r, const SearchRow& row) {
  return headroom_fraction(row.memory_bytes, r.capacity_bytes);
}

// "84 of 144 layouts not shown: 81 do not fit in memory, 3 ...": every layout not in the table,
// by why. Parts that are zero are left out.
std::string dropped_tally(const SearchRequest& q, const SearchResult& r, size_t shown) {
  std::vector<std::string> parts;
  auto add = [&](size_t n, const std::string& why) {
    if (n) parts.push_back(strprintf("%zu %s", n, why.c_str()));
  };
  add(r.invalid, "break a layout rule");
  add(r.too_big, "do not fit in memory");
  add(r.too_tight, strprintf("fit with less than %.0f%% of memory free (--min-headroom)",
                             100.0 * q.min_headroom_fraction));
  add(r.too_large, "are too large to model (--search-memory)");
  add(r.rows.size() - shown, "fit but rank below the ones shown (--top, --csv lists them)");
  std::string s = strprintf("%zu of %zu layouts not shown", r.candidates - shown, r.candidates);
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : ": ") + parts[i];
  return s;
}

std::string range_text(const SearchRow& row) {
  return row.step_range.known
             ? strprintf("%.3f-%.3f", row.step_range.low_us * 1e-6, row.step_range.high_us * 1e-6)
             : "-";
}

// A share of the step as text: empty when the row was not estimated in full.
std::string detail_fraction(const SearchRow& row, double us) {
  return row.detailed ? strprintf("%.4f", us / row.step_time_us) : "";
}

}  // namespace

bool ties_with_best(const SearchResult& r, size_t i) {
  if (r.rows.empty() || i >= r.rows.size()) return false;
  const StepRange& best = r.rows[0].step_range;
  const double t = r.rows[i].step_time_us;
  return best.known && t >= best.low_us && t <= best.high_us;
}

void search_csv(std::ostream& os, const SearchRequest& q, const SearchResult& r) {
  const std::vector<std::string> columns = config_csv_columns();
  for (size_t i = 0; i < columns.size(); ++i) os << (i ? "," : "") << columns[i];
  os << '\n';
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SearchRow& row = r.rows[i];
    const ParallelConfig& c = row.cfg;
    auto n = [](int64_t v) { return std::to_string(v); };
    auto g = [](double v) { return strprintf("%.6g", v); };
    auto g9 = [](double v) { return strprintf("%.9g", v); };
    // The range's ends are empty when no published run of this GPU and stack sets one.
    const bool known = row.step_range.known;
    const std::map<std::string, std::string> cells = {
        {"index", n(static_cast<int64_t>(i))},
        {"gpu", r.gpu},
        {"topology", r.topology},
        // Gigabits, as the sweep's column (the topology holds the NIC in gigabytes per second).
        {"nic_gbps", g(r.nic_gbps * 8)},
        {"gpus_per_node", n(r.gpus_per_node)},
        {"nvlink_gb_per_s", g(r.nvlink_gbps)},
        {"speed", "1"},
        {"gpus", n(c.gpus())},
        {"tp", n(c.tp)},
        {"cp", n(c.cp)},
        {"pp", n(c.pp)},
        {"dp", n(c.dp)},
        {"interleave", n(c.interleave)},
        {"mbs", n(c.mbs)},
        {"gbs", n(c.gbs)},
        {"recompute", to_string(c.recompute)},
        {"sp", n(c.sequence_parallel)},
        {"dist_opt", n(c.distributed_optimizer)},
        {"fsdp", n(c.fsdp)},
        {"stack", r.stack},
        {"dtype", cost::to_string(c.dtype)},
        {"estimated", "1"},
        {"feasible", "1"},
        {"step_time_s", g9(row.step_time_us * 1e-6)},
        {"tokens_per_s", g9(row.tokens_per_s)},
        {"mfu", g(row.mfu)},
        {"memory_gib", g(row.memory_bytes / kGiB)},
        {"capacity_gib", g(r.capacity_bytes / kGiB)},
        {"rank", n(static_cast<int64_t>(i + 1))},
        {"split_embedding", n(c.split_counts_embedding)},
        {"step_time_low_s", known ? g9(row.step_range.low_us * 1e-6) : ""},
        {"step_time_high_s", known ? g9(row.step_range.high_us * 1e-6) : ""},
        {"tie_with_best", known ? n(ties_with_best(r, i)) : ""},
        {"model_tflops_per_gpu", g(row.model_tflops_per_gpu)},
        {"headroom_fraction", g(headroom(r, row))},
        {"bubble_fraction", detail_fraction(row, row.breakdown.bubble_us)},
        {"exposed_comm_fraction", detail_fraction(row, row.breakdown.exposed_comm_us)},
    };
    for (size_t k = 0; k < columns.size(); ++k) {
      const auto it = cells.find(columns[k]);
      os << (k ? "," : "") << (it == cells.end() ? "" : it->second);
    }
    os << '\n';
  }
}

void search_json(std::ostream& os, const SearchRequest& q, const SearchResult& r, size_t shown) {
  common::JsonWriter w(os);
  w.begin_object().field("gpus", q.gpus).field("candidates", uint64_t{r.candidates});
  w.field("stack", r.stack);
  w.field("invalid", uint64_t{r.invalid}).field("too_big", uint64_t{r.too_big});
  w.field("too_tight", uint64_t{r.too_tight})
      .field("min_headroom_fraction", q.min_headroom_fraction);
  w.field("too_large", uint64_t{r.too_large});
  w.field("estimated", uint64_t{r.rows.size()}).field("graphs", uint64_t{r.graphs});
  w.field("not_shown", uint64_t{r.candidates - shown});
  w.field("capacity_bytes", r.capacity_bytes);
  w.field("rank_s", r.rank_s).field("detail_s", r.detail_s).key("layouts").begin_array();
  for (size_t i = 0; i < shown; ++i) {
    const SearchRow& row = r.rows[i];
    const ParallelConfig& c = row.cfg;
    w.begin_object().field("gpus", c.gpus()).field("tp", c.tp).field("cp", c.cp);
    w.field("pp", c.pp).field("dp", c.dp);
    w.field("mbs", c.mbs).field("interleave", c.interleave);
    w.field("recompute", to_string(c.recompute));
    w.field("split_embedding", c.split_counts_embedding);
    w.field("step_time_s", row.step_time_us * 1e-6);
    if (row.step_range.known) {
      w.field("step_time_low_s", row.step_range.low_us * 1e-6);
      w.field("step_time_high_s", row.step_range.high_us * 1e-6);
      w.field("tie_with_best", ties_with_best(r, i));
    }
    w.field("tokens_per_s", row.tokens_per_s);
    w.field("model_tflops_per_gpu", row.model_tflops_per_gpu).field("mfu", row.mfu);
    w.field("memory_bytes", row.memory_bytes);
    w.field("headroom_fraction", headroom(r, row));
    if (row.detailed) {
      w.key("breakdown");
      breakdown_json(w, row.breakdown);
    }
    w.end_object();
  }
  w.end_array().end_object();
  os << '\n';
}

void search_text(std::ostream& os, const SearchRequest& q, const SearchResult& r, size_t shown) {
  os << strprintf(
      "lumos estimate --search: %s on %lld x %s, gbs %lld, %s, stack %s: %zu layouts, %zu "
      "estimated (%zu graphs built) in %.1f s\n",
      q.base.model.name.c_str(), static_cast<long long>(q.gpus), q.base.gpu.c_str(),
      static_cast<long long>(q.base.cfg.gbs), cost::to_string(q.base.cfg.dtype), r.stack.c_str(),
      r.candidates, r.rows.size(), r.graphs, r.rank_s);
  os << "  " << dropped_tally(q, r, shown) << '\n';
  if (r.rows.empty()) os << "  no layout fits\n";
  if (shown == 0) return;
  os << "  rank  GPUs  TP CP PP  DP   v mbs recompute  step (s)  range (s)    tie  tokens/s  "
        "TFLOP/s/GPU    MFU  bubble  exp.comm  memory GiB  free\n";
  size_t ties = 0;
  for (size_t i = 0; i < shown; ++i) {
    const SearchRow& row = r.rows[i];
    const ParallelConfig& c = row.cfg;
    const double w = row.step_time_us / 100;
    const std::string bubble =
        row.detailed ? strprintf("%5.1f%%", row.breakdown.bubble_us / w) : "     -";
    const std::string comm =
        row.detailed ? strprintf("%7.1f%%", row.breakdown.exposed_comm_us / w) : "       -";
    const bool tie = i > 0 && ties_with_best(r, i);
    ties += tie;
    const double free = headroom(r, row);
    os << strprintf(
        "  %4zu %5lld %3d %2d %2d %3d %3d %3lld %-9s %9.3f %11s %5s %9.0f %12.1f %5.1f%%  %s  "
        "%s %11.1f %4.0f%%%s%s\n",
        i + 1, static_cast<long long>(c.gpus()), c.tp, c.cp, c.pp, c.dp, c.interleave,
        static_cast<long long>(c.mbs), to_string(c.recompute), row.step_time_us * 1e-6,
        range_text(row).c_str(),
        i == 0 ? "best"
        : tie  ? "tie"
               : "",
        row.tokens_per_s, row.model_tflops_per_gpu, 100 * row.mfu, bubble.c_str(), comm.c_str(),
        row.memory_bytes / kGiB, 100 * free, free < kTightHeadroom ? "  fits, tight" : "",
        c.split_counts_embedding ? "  (split-embedding)" : "");
  }
  if (ties > 0)
    os << strprintf(
        "  %zu of the %zu shown tie with the best: their step times lie inside its range (what "
        "the nearest published runs say the model's error can be), so the estimate cannot "
        "rank them\n",
        ties, shown - 1);
  size_t tight = 0;
  for (size_t i = 0; i < shown; ++i) tight += headroom(r, r.rows[i]) < kTightHeadroom;
  if (tight > 0)
    os << strprintf(
        "  %zu of the %zu shown leave less than %.0f%% of the GPU's %.1f GiB free (fits, "
        "tight): fragmentation or a longer sequence may not fit; --min-headroom 10%% ranks only "
        "layouts with room\n",
        tight, shown, 100 * kTightHeadroom, r.capacity_bytes / kGiB);
}

}  // namespace lumos::report
