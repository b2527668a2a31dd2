// What `lumos cost classify` answers about one trace: its GPU time per kernel class, and how the
// cost model compares with the measured GEMM and NCCL kernels on the traced GPU.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"
#include "trace/classified_kernels.hpp"
#include "trace/event_table.hpp"

namespace lumos::trace {

struct ClassTime {
  std::string kernel_class;
  double time_us = 0;
  double percent_of_gpu_time = 0;  // 100 * time_us / the trace's GPU time
};

// |model - measured| / measured over the priced kernels of one class.
struct ModelError {
  std::string kernel_class;
  size_t kernels = 0;
  double median_abs_error = 0;  // a fraction, the upper median
};

// One priced kernel: exactly one of `gemm` and `collective` is set.
struct PricedKernel {
  std::optional<cost::GemmQuery> gemm;
  std::optional<cost::CollectiveQuery> collective;
  double model_us = 0, measured_us = 0;
  std::string name;  // the traced kernel's name
};

struct TraceClassification {
  std::string trace;  // the trace's path
  std::string gpu;    // traced GPU in kernels_db, "" when unknown (no predictions then)
  double gpu_time_us = 0;
  double classified_fraction = 0;  // of GPU time, excluding class "other"
  std::vector<ClassTime> classes;  // by class name
  std::vector<ModelError> errors;  // by class name
  // In trace order: a GEMM's line before a collective's for the same kernel. Empty when the GPU
  // is unknown; leaves out GEMMs the model cannot price (a dtype the GPU has no peak for), as
  // `errors` does.
  std::vector<PricedKernel> kernels;
};

// Classifies every GPU op of the trace (cost_report) and prices GEMM and NCCL kernels on the
// traced GPU when kernels_db knows it.
TraceClassification classify_trace(const cost::KernelsDb& db, const trace::EventTable& t);

}  // namespace lumos::trace
