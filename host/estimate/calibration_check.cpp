#include "estimate/calibration_check.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "estimate/unfitted_columns.hpp"

namespace lumos::estimate {

std::vector<CalibrationRow> calibration_rows(const cost::KernelsDb& db) {
  return calibration_rows(db, published_runs());
}

std::vector<CalibrationRow> calibration_rows(const cost::KernelsDb& db,
                                             const std::vector<PublishedRun>& runs) {
  std::vector<CalibrationRow> rows;
  for (const auto& p : runs) {
    const auto e = run_estimate(p.request, db).estimate;
    CalibrationRow r;
    r.run = &p;
    r.lumos_tflops_per_gpu = e.model_tflops_per_gpu;
    r.step_time_s = e.step_time_us * 1e-6;
    // A published rate is Megatron's model FLOPs per GPU per second: the same formula as lumos's.
    r.published_step_s =
        p.step_time_s > 0
            ? p.step_time_s
            : e.model_flops / (static_cast<double>(e.cfg.gpus()) * p.model_tflops_per_gpu * 1e12);
    r.error_pct = (r.step_time_s - r.published_step_s) / r.published_step_s * 100;
    r.published_tflops_per_gpu = e.model_tflops_per_gpu * r.step_time_s / r.published_step_s;
    r.breakdown = e.breakdown;
    r.fits = e.fits;
    r.params = static_cast<double>(
        model::parameter_counts(e.model, e.layout.padded_vocab).total(e.model.layers));
    rows.push_back(r);
  }
  return rows;
}

ErrorSummary summarize_errors(std::string what, const std::vector<double>& errors_pct) {
  ErrorSummary s;
  s.what = std::move(what);
  for (double e : errors_pct) {
    s.count++;
    s.mean_abs_pct += std::fabs(e);
    s.signed_mean_pct += e;
    s.max_abs_pct = std::max(s.max_abs_pct, std::fabs(e));
    s.within_5pct += std::fabs(e) <= 5 ? 1 : 0;
  }
  if (s.count > 0) {
    s.mean_abs_pct /= s.count;
    s.signed_mean_pct /= s.count;
  }
  return s;
}

std::vector<CalibrationGroup> calibration_groups(const std::vector<CalibrationRow>& rows) {
  std::vector<CalibrationGroup> groups;
  std::vector<std::vector<double>> errors_pct;  // by group
  for (const CalibrationRow& r : rows) {
    const std::string& gpu = r.run->request.gpu;
    const std::string& stack = r.run->request.cfg.stack;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const CalibrationGroup& g) {
      return g.gpu == gpu && g.stack == stack;
    });
    if (it == groups.end()) {
      it = groups.insert(groups.end(), CalibrationGroup{gpu, stack});
      errors_pct.emplace_back();
    }
    errors_pct[static_cast<size_t>(it - groups.begin())].push_back(r.error_pct);
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const ErrorSummary s = summarize_errors(groups[i].gpu, errors_pct[i]);
    groups[i].rows = s.count;
    groups[i].mean_abs_error_pct = s.mean_abs_pct;
    groups[i].signed_mean_error_pct = s.signed_mean_pct;
    groups[i].max_abs_error_pct = s.max_abs_pct;
  }
  return groups;
}

std::vector<DtypePair> dtype_pairs(const std::vector<CalibrationRow>& rows) {
  std::vector<DtypePair> pairs;
  for (const CalibrationRow& b : rows) {
    const std::string& label = b.run->label;
    const size_t at = label.find("BF16");
    if (b.run->request.cfg.dtype != cost::Dtype::kBf16 || at == std::string::npos) continue;
    const std::string twin = std::string(label).replace(at, 4, "FP8");
    for (const CalibrationRow& f : rows) {
      if (f.run->label != twin || f.run->request.cfg.dtype != cost::Dtype::kFp8) continue;
      DtypePair p{&b, &f};
      p.published_ratio = f.published_step_s / b.published_step_s;
      p.lumos_ratio = f.step_time_s / b.step_time_s;
      p.error_pct = (p.lumos_ratio / p.published_ratio - 1) * 100;
      pairs.push_back(p);
      break;
    }
  }
  return pairs;
}

void ErrorRange::add(double pct, bool first) {
  least_pct = first ? pct : std::min(least_pct, pct);
  most_pct = first ? pct : std::max(most_pct, pct);
}

namespace {

// "dgxc Llama3.1-405B BF16, 96 GPUs (21 layers)" -> "dgxc Llama3.1-405B proxies".
std::string table_of(const std::string& bf16_label) {
  const std::string table = bf16_label.substr(0, bf16_label.find(" BF16"));
  return bf16_label.find(" layers)") != std::string::npos ? table + " proxies" : table;
}

std::vector<UnfittedTable> tables_of(const std::vector<DtypePair>& pairs) {
  std::vector<UnfittedTable> tables;
  for (const DtypePair& p : pairs) {
    const std::string name = table_of(p.bf16->run->label);
    auto it = std::find_if(tables.begin(), tables.end(),
                           [&](const UnfittedTable& t) { return t.name == name; });
    if (it == tables.end()) {
      UnfittedTable t;
      t.name = name;
      it = tables.insert(tables.end(), t);
    }
    const bool first = it->columns++ == 0;
    it->bf16.add(p.bf16->error_pct, first);
    it->fp8.add(p.fp8->error_pct, first);
    it->ratio.add(p.error_pct, first);
  }
  return tables;
}

}  // namespace

UnfittedCheck check_unfitted_columns(const cost::KernelsDb& db) {
  UnfittedCheck u;
  u.rows = calibration_rows(db, unfitted_columns());
  u.pairs = dtype_pairs(u.rows);
  u.tables = tables_of(u.pairs);
  std::vector<double> bf16, fp8, ratios;
  for (const CalibrationRow& r : u.rows)
    (r.run->request.cfg.dtype == cost::Dtype::kFp8 ? fp8 : bf16).push_back(r.error_pct);
  for (const DtypePair& p : u.pairs) ratios.push_back(p.error_pct);
  u.bf16 = summarize_errors("BF16 steps", bf16);
  u.fp8 = summarize_errors("FP8 steps", fp8);
  u.ratios = summarize_errors("FP8/BF16 ratios", ratios);
  return u;
}

CalibrationCheck check_calibration(const cost::KernelsDb& db, int latency_runs,
                                   const ProgressFn& progress) {
  LUMOS_EXPECT(latency_runs >= 1, "calibration check: at least one timed estimate");
  CalibrationCheck c;
  c.rows = calibration_rows(db);
  c.groups = calibration_groups(c.rows);
  // Latency: llama3-405b, the largest preset, on 1024 GPUs in Megatron-Bridge's layout.
  const PublishedRun* largest = nullptr;
  for (const auto& p : published_runs())
    if (p.request.cfg.gpus() == 1024 && p.request.model.name == "llama3-405b" &&
        (!largest || p.request.cfg.gbs < largest->request.cfg.gbs))
      largest = &p;
  LUMOS_EXPECT(largest != nullptr,
               "calibration check: no 1024-GPU llama3-405b run among the published runs");
  std::vector<double> wall_s;
  Estimate last;
  for (int k = 0; k < latency_runs; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    last = run_estimate(largest->request, db).estimate;
    wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (progress) progress(wall_s.size(), static_cast<uint64_t>(latency_runs));
  }
  EstimateLatency& l = c.latency;
  l.options = largest->options;
  l.runs = latency_runs;
  l.median_s = median(wall_s);
  l.min_s = *std::min_element(wall_s.begin(), wall_s.end());
  l.max_s = *std::max_element(wall_s.begin(), wall_s.end());
  l.nodes = last.nodes;
  l.edges = last.edges;
  return c;
}

}  // namespace lumos::estimate
