// The model-driven estimate against published training runs (the calibration check), and
// how long an estimate of the largest preset at 1024 GPUs takes (what `lumos bench estimate`
// measures).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/published_runs.hpp"
#include "replay/step_report.hpp"

namespace lumos::estimate {

struct CalibrationRow {
  const PublishedRun* run = nullptr;    // into published_runs()
  double lumos_tflops_per_gpu = 0;      // model TFLOP/s per GPU
  double step_time_s = 0;               // lumos
  double published_step_s = 0;          // as published, or from the published TFLOP/s
  double params = 0;                    // of the model
  double published_tflops_per_gpu = 0;  // model TFLOP/s per GPU the published step implies
  replay::Breakdown breakdown;          // lumos's, mean over stages: where its step goes
  double error_pct = 0;  // lumos step time against published, in percent (negative: too fast)
  bool fits = false;
};

// Rows of one GPU and software stack.
struct CalibrationGroup {
  std::string gpu, stack;
  int rows = 0;
  double mean_abs_error_pct = 0, signed_mean_error_pct = 0, max_abs_error_pct = 0;
};

// Wall time of `lumos estimate` for llama3-405b on 1024 GPUs in Megatron-Bridge's layout.
struct EstimateLatency {
  std::string options;  // the run's `lumos estimate` flags
  int runs = 0;
  double median_s = 0, min_s = 0, max_s = 0;  // median: the upper one
  uint64_t nodes = 0, edges = 0;              // of the estimated graph
};

struct CalibrationCheck {
  std::vector<CalibrationRow> rows;      // one per published run, in their order
  std::vector<CalibrationGroup> groups;  // by GPU and stack, in order of first appearance
  EstimateLatency latency;
};

// Compares the step times of every published run, groups them by GPU and stack; then times
// `latency_runs` (at least 1) estimates of the largest preset. `progress`: timed runs done.
CalibrationCheck check_calibration(const cost::KernelsDb& db, int latency_runs,
                                   const ProgressFn& progress = {});
// The comparison alone (no timing): of published_runs(), or of `runs` (which must outlive the
// rows).
std::vector<CalibrationRow> calibration_rows(const cost::KernelsDb& db);
std::vector<CalibrationRow> calibration_rows(const cost::KernelsDb& db,
                                             const std::vector<PublishedRun>& runs);
std::vector<CalibrationGroup> calibration_groups(const std::vector<CalibrationRow>& rows);

// A BF16 row and the FP8 row of the same layout: FP8's step over BF16's, published and lumos's.
struct DtypePair {
  const CalibrationRow* bf16 = nullptr;
  const CalibrationRow* fp8 = nullptr;
  double published_ratio = 0, lumos_ratio = 0;
  double error_pct = 0;  // lumos's ratio against the published one (positive: FP8 gains less)
};
// Every BF16 row whose twin (the same label with "FP8" for "BF16") is among `rows`, in order.
std::vector<DtypePair> dtype_pairs(const std::vector<CalibrationRow>& rows);

// Errors in percent, summed up.
struct ErrorSummary {
  std::string what;
  int count = 0;
  double mean_abs_pct = 0, signed_mean_pct = 0, max_abs_pct = 0;
  int within_5pct = 0;
};
ErrorSummary summarize_errors(std::string what, const std::vector<double>& errors_pct);

// The least and most of some errors, in percent.
struct ErrorRange {
  double least_pct = 0, most_pct = 0;
  void add(double pct, bool first);
};
// One table's columns (a proxy layout's apart, as "<table> proxies"): how each dtype's step and
// the FP8/BF16 ratio miss across them.
struct UnfittedTable {
  std::string name;
  int columns = 0;
  ErrorRange bf16, fp8, ratio;
};

// The estimate against the columns of the published tables no constant is fitted to
// (unfitted_columns()): each row, each FP8/BF16 pair's ratio, and their summaries.
struct UnfittedCheck {
  UnfittedCheck() = default;
  // Moved, never copied: `pairs` point into `rows` (a moved vector keeps its elements in place).
  UnfittedCheck(const UnfittedCheck&) = delete;
  UnfittedCheck& operator=(const UnfittedCheck&) = delete;
  UnfittedCheck(UnfittedCheck&&) = default;
  UnfittedCheck& operator=(UnfittedCheck&&) = default;

  std::vector<CalibrationRow> rows;
  std::vector<DtypePair> pairs;
  std::vector<UnfittedTable> tables;  // in order of first appearance
  ErrorSummary bf16, fp8, ratios;
};
UnfittedCheck check_unfitted_columns(const cost::KernelsDb& db);

}  // namespace lumos::estimate
