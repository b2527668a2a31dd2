#include "report/sweep_csv.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>

#include "common/format.hpp"
#include "common/thread_pool.hpp"

namespace lumos::report {

namespace {

using sweep::SweepRow;

// A cell that may hold a reason: commas would split it.
std::string cell(std::string s) {
  for (char& c : s)
    if (c == ',' || c == '\n' || c == '"') c = ';';
  return s;
}

// printf's %.6g and %.9g to the byte (std::to_chars in the general format is specified as
// printf's %g in the C locale) without printf's per-call cost: a sweep writes hundreds of
// thousands of cells.
template <int kDigits>
std::string general(double v) {
  char buf[32];
  const std::to_chars_result r =
      std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, kDigits);
  return std::string(buf, r.ptr);
}
std::string g6(double v) {
  return general<6>(v);
}
std::string g9(double v) {
  return general<9>(v);
}
// The step's results: empty for a configuration that was not replayed.
std::string g6_estimated(const SweepRow& r, double v) {
  return r.estimated ? g6(v) : "";
}
std::string g9_estimated(const SweepRow& r, double v) {
  return r.estimated ? g9(v) : "";
}
std::string flag(bool b) {
  return b ? "1" : "0";
}

struct Column {
  const char* name;
  std::string (*text)(const SweepRow&);
};

// The variants table's columns, in order (README: "Sweep CSV columns").
const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns = {
      {"index", [](const SweepRow& r) { return std::to_string(r.variant.index); }},
      {"gpu", [](const SweepRow& r) { return cell(r.variant.gpu); }},
      {"topology", [](const SweepRow& r) { return cell(r.variant.topology); }},
      // Gigabits, as the name says and NICs are sold (--nic-bandwidth 400Gbps: 400); the
      // variant holds gigabytes per second, as the cost model prices with.
      {"nic_gbps", [](const SweepRow& r) { return g6(r.variant.nic_gbps * 8); }},
      {"gpus_per_node", [](const SweepRow& r) { return std::to_string(r.variant.gpus_per_node); }},
      {"nvlink_gb_per_s", [](const SweepRow& r) { return g6(r.variant.nvlink_gbps); }},
      {"speed", [](const SweepRow& r) { return cell(r.variant.speed_label); }},
      {"region", [](const SweepRow& r) { return cell(r.variant.region); }},
      {"pue", [](const SweepRow& r) { return g6(r.variant.pue); }},
      {"gpus", [](const SweepRow& r) { return std::to_string(r.variant.cfg.gpus()); }},
      {"tp", [](const SweepRow& r) { return std::to_string(r.variant.cfg.tp); }},
      {"cp", [](const SweepRow& r) { return std::to_string(r.variant.cfg.cp); }},
      {"pp", [](const SweepRow& r) { return std::to_string(r.variant.cfg.pp); }},
      {"dp", [](const SweepRow& r) { return std::to_string(r.variant.cfg.dp); }},
      {"interleave", [](const SweepRow& r) { return std::to_string(r.variant.cfg.interleave); }},
      {"mbs", [](const SweepRow& r) { return std::to_string(r.variant.cfg.mbs); }},
      {"gbs", [](const SweepRow& r) { return std::to_string(r.variant.cfg.gbs); }},
      {"recompute",
       [](const SweepRow& r) { return std::string(model::to_string(r.variant.cfg.recompute)); }},
      {"sp", [](const SweepRow& r) { return flag(r.variant.cfg.sequence_parallel); }},
      {"dist_opt", [](const SweepRow& r) { return flag(r.variant.cfg.distributed_optimizer); }},
      {"fsdp", [](const SweepRow& r) { return flag(r.variant.cfg.fsdp); }},
      {"stack", [](const SweepRow& r) { return cell(r.variant.cfg.stack); }},
      {"dtype",
       [](const SweepRow& r) { return std::string(cost::to_string(r.variant.cfg.dtype)); }},
      {"estimated", [](const SweepRow& r) { return flag(r.estimated); }},
      {"feasible", [](const SweepRow& r) { return flag(r.feasible); }},
      {"reason", [](const SweepRow& r) { return cell(r.reason); }},
      {"step_time_s", [](const SweepRow& r) { return g9_estimated(r, r.step_time_us * 1e-6); }},
      {"tokens_per_s", [](const SweepRow& r) { return g9_estimated(r, r.tokens_per_s); }},
      {"mfu", [](const SweepRow& r) { return g6_estimated(r, r.mfu); }},
      // Memory is known before a graph is built: a configuration not replayed still has it.
      {"memory_gib", [](const SweepRow& r) { return g6(r.memory_gib); }},
      {"capacity_gib", [](const SweepRow& r) { return g6(r.capacity_gib); }},
      {"time_to_train_h", [](const SweepRow& r) { return g9_estimated(r, r.time_to_train_h); }},
      {"gpu_hours", [](const SweepRow& r) { return g9_estimated(r, r.gpu_hours); }},
      {"gpu_power_w", [](const SweepRow& r) { return g6_estimated(r, r.gpu_power_w); }},
      {"energy_kwh", [](const SweepRow& r) { return g9_estimated(r, r.energy_kwh); }},
      {"gpu_energy_kwh", [](const SweepRow& r) { return g9_estimated(r, r.gpu_energy_kwh); }},
      {"node_energy_kwh", [](const SweepRow& r) { return g9_estimated(r, r.node_energy_kwh); }},
      {"facility_energy_kwh",
       [](const SweepRow& r) { return g9_estimated(r, r.facility_energy_kwh); }},
      {"grid_g_per_kwh", [](const SweepRow& r) { return g6_estimated(r, r.grid_g_per_kwh); }},
      {"operational_kg", [](const SweepRow& r) { return g9_estimated(r, r.operational_kg); }},
      {"embodied_kg", [](const SweepRow& r) { return g9_estimated(r, r.embodied_kg); }},
      {"sci_kg", [](const SweepRow& r) { return g9_estimated(r, r.sci_kg); }},
      // The layout search's columns (the search is a sweep over layouts, one schema for both):
      // its rank, range and breakdown are the search's, empty here.
      {"rank", [](const SweepRow&) { return std::string(); }},
      {"split_embedding",
       [](const SweepRow& r) { return flag(r.variant.cfg.split_counts_embedding); }},
      {"step_time_low_s", [](const SweepRow&) { return std::string(); }},
      {"step_time_high_s", [](const SweepRow&) { return std::string(); }},
      {"tie_with_best", [](const SweepRow&) { return std::string(); }},
      {"model_tflops_per_gpu", [](const SweepRow&) { return std::string(); }},
      {"headroom_fraction",
       [](const SweepRow& r) { return g6(headroom_fraction(r.memory_gib, r.capacity_gib)); }},
      {"bubble_fraction", [](const SweepRow&) { return std::string(); }},
      {"exposed_comm_fraction", [](const SweepRow&) { return std::string(); }},
  };
  return kColumns;
}

}  // namespace

double headroom_fraction(double memory, double capacity) {
  return capacity > 0 ? 1.0 - memory / capacity : 0.0;
}

std::vector<std::string> config_csv_columns() {
  std::vector<std::string> out;
  for (const Column& c : columns()) out.emplace_back(c.name);
  return out;
}

CsvView sweep_view(const sweep::SweepResult& r, const std::string& source) {
  CsvView v;
  v.source = source;
  for (const Column& c : columns()) v.header.emplace_back(c.name);
  v.rows = r.rows.size();
  v.cell = [&r](size_t row, size_t column) { return columns()[column].text(r.rows[row]); };
  return v;
}

namespace {

// Rows [first, last) of `rows` as CSV lines appended to `out`.
void append_rows(const CsvView& t, const size_t* first, const size_t* last, std::string* out) {
  for (; first != last; ++first) {
    for (size_t i = 0; i < t.header.size(); ++i) (*out += i ? "," : "") += t.cell(*first, i);
    *out += '\n';
  }
}

}  // namespace

void write_csv(std::ostream& os, const CsvView& t, const std::vector<size_t>& rows) {
  std::string head;
  for (size_t i = 0; i < t.header.size(); ++i) (head += i ? "," : "") += t.header[i];
  head += '\n';
  os.write(head.data(), static_cast<std::streamsize>(head.size()));
  // Rows formatted a window at a time, its parts on all cores (a cell is a pure function of the
  // table: CsvView), and written a part at a time in order: one stream insertion per cell cost as
  // much as formatting it, and formatting is most of writing a sweep's CSV (the large sweep's
  // 2.9 MB: 19 ms on one core). A window bounds the text held at once.
  constexpr size_t kWindowRows = 8192, kRowsPerPart = 1024;
  const unsigned threads = std::min(worker_threads(0), 8u);
  std::vector<std::string> parts(kWindowRows / kRowsPerPart);
  for (size_t w0 = 0; w0 < rows.size(); w0 += kWindowRows) {
    const size_t wn = std::min(kWindowRows, rows.size() - w0);
    const size_t n_parts = (wn + kRowsPerPart - 1) / kRowsPerPart;
    std::atomic<size_t> next{0};
    run_workers(std::min<unsigned>(threads, static_cast<unsigned>(n_parts)), [&] {
      for (size_t p; (p = next++) < n_parts;) {
        const size_t* first = rows.data() + w0 + p * kRowsPerPart;
        parts[p].clear();
        append_rows(t, first, first + std::min(kRowsPerPart, wn - p * kRowsPerPart), &parts[p]);
      }
    });
    for (size_t p = 0; p < n_parts; ++p)
      os.write(parts[p].data(), static_cast<std::streamsize>(parts[p].size()));
  }
}

void sweep_csv(std::ostream& os, const sweep::SweepResult& r) {
  std::vector<size_t> all(r.rows.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  write_csv(os, sweep_view(r, "sweep"), all);
}

}  // namespace lumos::report
