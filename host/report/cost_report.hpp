// Renders `lumos cost` answers as text or JSON: one kernel or collective priced on one GPU, a
// trace's classification, and the GPUs of kernels_db.
#pragma once
#include <ostream>
#include <string>

#include "cost/attention_model.hpp"
#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"
#include "trace/trace_classification.hpp"

namespace lumos::report {

void gemm_text(std::ostream& os, const cost::GpuSpec& gpu, const cost::GemmQuery& q,
               const cost::GemmEstimate& e);
void gemm_json(std::ostream& os, const cost::GpuSpec& gpu, const cost::GemmQuery& q,
               const cost::GemmEstimate& e);

void attention_text(std::ostream& os, const cost::GpuSpec& gpu, const cost::AttentionQuery& q,
                    const cost::AttentionEstimate& e);
void attention_json(std::ostream& os, const cost::GpuSpec& gpu, const cost::AttentionQuery& q,
                    const cost::AttentionEstimate& e);

// `cost collective --json`'s schema_version: 2 since its bandwidths are named for their unit
// (algbw_gb_per_s, busbw_gb_per_s: gigabytes per second, as nccl-tests reports them).
inline constexpr int kCollectiveSchemaVersion = 2;

void collective_text(std::ostream& os, const cost::GpuSpec& gpu, const cost::Topology& topo,
                     const cost::CollectiveQuery& q, const cost::CollectiveEstimate& e);
void collective_json(std::ostream& os, const cost::GpuSpec& gpu, const cost::Topology& topo,
                     const cost::CollectiveQuery& q, const cost::CollectiveEstimate& e);

// A memory-bound kernel, optimizer step or memcpy: `kind` is memory, optimizer or memcpy.
void kernel_time_text(std::ostream& os, const cost::GpuSpec& gpu, const std::string& kind,
                      double time_us);
void kernel_time_json(std::ostream& os, const cost::GpuSpec& gpu, const std::string& kind,
                      double time_us);

// `verbose` lists every priced kernel, model against measured.
void classification_text(std::ostream& os, const trace::TraceClassification& c, bool verbose);
void classification_json(std::ostream& os, const trace::TraceClassification& c);

// One row per GPU of kernels_db.
void gpus_text(std::ostream& os, const cost::KernelsDb& db);

}  // namespace lumos::report
