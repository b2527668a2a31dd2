// Maps a traced kernel to a kernel class (the name patterns of kernels_db/kernel_classes.json)
// and, where the launching operator's input dims allow, to a shape the cost model can price;
// reports how much of a trace's GPU time it classifies and how the model compares with the
// measured durations.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/attention_model.hpp"
#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"
#include "trace/event_table.hpp"

namespace lumos::cost {

// "other" when no pattern matches.
std::string classify_kernel(const KernelsDb& db, std::string_view kernel_name);

// A traced GPU op's class and, when known, the query that prices it.
struct ClassifiedKernel {
  uint32_t event = 0;  // index into EventTable::events
  std::string kernel_class;
  std::optional<GemmQuery> gemm;
  std::optional<CollectiveQuery> collective;
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
TraceCostReport cost_report(const KernelsDb& db, const trace::EventTable& t);

}  // namespace lumos::cost
