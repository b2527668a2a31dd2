#include "report/sweep_csv.hpp"

#include <cmath>
#include <fstream>

#include "common/error.hpp"
#include "common/format.hpp"
#include "replay/pareto.hpp"

namespace lumos::report {

namespace {

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t end = line.find(',', at);
    out.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return out;
    at = end + 1;
  }
}

// A cell that may hold a reason: commas would split it.
std::string cell(std::string s) {
  for (char& c : s)
    if (c == ',' || c == '\n' || c == '"') c = ';';
  return s;
}

}  // namespace

void sweep_csv(std::ostream& os, const sweep::SweepResult& r) {
  os << "index,gpu,topology,nic_gbps,gpus_per_node,nvlink_gbps,speed,region,pue,gpus,tp,cp,pp,dp,"
        "interleave,"
        "mbs,gbs,recompute,sp,dist_"
        "opt,"
        "fsdp,"
        "stack,"
        "dtype,estimated,feasible,reason,step_time_s,tokens_per_s,mfu,memory_gib,capacity_gib,"
        "time_to_train_h,gpu_hours,gpu_power_w,energy_kwh,gpu_energy_kwh,node_energy_kwh,"
        "facility_energy_kwh,grid_g_per_kwh,operational_kg,embodied_kg,sci_kg\n";
  for (const sweep::SweepRow& row : r.rows) {
    const auto& v = row.variant;
    const auto& c = v.cfg;
    os << v.index << ',' << cell(v.gpu) << ',' << cell(v.topology) << ','
       << strprintf("%.6g", v.nic_gbps) << ',' << v.gpus_per_node << ','
       << strprintf("%.6g", v.nvlink_gbps) << ',' << cell(v.speed_label) << ',' << cell(v.region)
       << ',' << strprintf("%.6g", v.pue) << ',' << c.gpus() << ',' << c.tp << ',' << c.cp << ','
       << c.pp << ',' << c.dp << ',' << c.interleave << ',' << c.mbs << ',' << c.gbs << ','
       << model::to_string(c.recompute) << ',' << (c.sequence_parallel ? 1 : 0) << ','
       << (c.distributed_optimizer ? 1 : 0) << ',' << (c.fsdp ? 1 : 0) << ',' << cell(c.stack)
       << ',' << cost::to_string(c.dtype) << ',' << (row.estimated ? 1 : 0) << ','
       << (row.feasible ? 1 : 0) << ',' << cell(row.reason);
    if (row.estimated)
      os << strprintf(
          ",%.9g,%.9g,%.6g,%.6g,%.6g,%.9g,%.9g,%.6g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,%.9g,%.9g",
          row.step_time_us * 1e-6, row.tokens_per_s, row.mfu, row.memory_gib, row.capacity_gib,
          row.time_to_train_h, row.gpu_hours, row.gpu_power_w, row.energy_kwh, row.gpu_energy_kwh,
          row.node_energy_kwh, row.facility_energy_kwh, row.grid_g_per_kwh, row.operational_kg,
          row.embodied_kg, row.sci_kg);
    else
      os << strprintf(",,,,%.6g,%.6g,,,,,,,,,,,", row.memory_gib, row.capacity_gib);
    os << '\n';
  }
}

size_t CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  std::string have;
  for (const auto& h : header) {
    if (!have.empty()) have += ", ";
    have += h;
  }
  throw InputError(source + ": no column '" + name + "' (columns: " + have + ")");
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path);
  LUMOS_EXPECT(in.good(), path + ": cannot open the file");
  return parse_csv(in, path);
}

CsvTable parse_csv(std::istream& in, const std::string& path) {
  CsvTable t;
  t.source = path;
  std::string line;
  LUMOS_EXPECT(static_cast<bool>(std::getline(in, line)) && !line.empty(),
               path + ": empty file, expected a CSV header");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  t.header = split_cells(line);
  for (size_t n = 2; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells = split_cells(line);
    LUMOS_EXPECT(cells.size() == t.header.size(),
                 path + ":" + std::to_string(n) + ": " + std::to_string(cells.size()) +
                     " cells, expected " + std::to_string(t.header.size()) + " as in the header");
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::vector<size_t> pareto_rows(const CsvTable& t, const std::vector<std::string>& objectives) {
  LUMOS_EXPECT(objectives.size() == 2 || objectives.size() == 3,
               "--objectives: expected two or three columns");
  std::vector<size_t> cols;
  std::vector<double> sign;
  for (const std::string& o : objectives) {
    const bool max = !o.empty() && o[0] == '-';
    cols.push_back(t.column(max ? o.substr(1) : o));
    sign.push_back(max ? -1.0 : 1.0);
  }
  size_t feasible_col = t.header.size();
  for (size_t i = 0; i < t.header.size(); ++i)
    if (t.header[i] == "feasible") feasible_col = i;
  std::vector<size_t> candidates;
  std::vector<std::vector<double>> obj(cols.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (feasible_col < t.header.size() && t.rows[r][feasible_col] != "1") continue;
    candidates.push_back(r);
    for (size_t k = 0; k < cols.size(); ++k) {
      const std::string& s = t.rows[r][cols[k]];
      const std::optional<double> parsed = parse_finite(s);
      const double v = parsed.value_or(0);
      LUMOS_EXPECT(parsed.has_value(), t.source + ":" + std::to_string(r + 2) + ": column '" +
                                           t.header[cols[k]] + "': '" + s + "' is not a number");
      obj[k].push_back(sign[k] * v);
    }
  }
  std::vector<size_t> out;
  if (candidates.empty()) return out;
  for (uint32_t i : replay::pareto_front(obj)) out.push_back(candidates[i]);
  return out;
}

void write_csv(std::ostream& os, const CsvTable& t, const std::vector<size_t>& rows) {
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) os << (i ? "," : "") << cells[i];
    os << '\n';
  };
  line(t.header);
  for (size_t r : rows) line(t.rows[r]);
}

}  // namespace lumos::report
