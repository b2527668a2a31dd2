// A trace's GPU ops by kernel class (cost/kernel_classifier's name patterns) and, where the
// launching operator's input dims allow, the shape the cost model can price; how much of the
// trace's GPU time is classified and how the model compares with the measured durations.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernel_classifier.hpp"
#include "cost/kernels_db.hpp"
#include "trace/event_table.hpp"

namespace lumos::trace {

// A traced GPU op's class and, when known, the query that prices it.
struct ClassifiedKernel {
  uint32_t event = 0;  // index into EventTable::events
  std::string kernel_class;
  std::optional<cost::GemmQuery> gemm;
  std::optional<cost::CollectiveQuery> collective;
};

struct TraceCostReport {
  double gpu_time_us = 0;
  std::map<std::string, double> time_by_class_us;
  double classified_fraction = 0;  // of GPU time, excluding class "other"
  std::vector<ClassifiedKernel> kernels;
  // Model vs measured for priced kernels, per class: |model - measured| / measured.
  std::map<std::string, std::vector<double>> rel_errors;
  std::string gpu;  // traced GPU in kernels_db, "" when unknown (no predictions then)
};

// Classifies every GPU op of a trace; prices GEMM and NCCL kernels on the traced GPU when the
// trace names a GPU that kernels_db knows.
TraceCostReport cost_report(const cost::KernelsDb& db, const EventTable& t);

}  // namespace lumos::trace
