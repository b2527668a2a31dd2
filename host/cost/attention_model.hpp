// Attention forward and backward time from the FlashAttention throughput tables
// (kernels_db/attention.json), by implementation, batch, heads, sequence, head dim, causal and
// dtype. FlashAttention-3 and cuDNN's fused attention tables are Hopper's (other GPUs of Hopper
// or later scale them by peak); on Ampere every flash query is answered from the FA2 tables.
#pragma once
#include <string>

#include "cost/kernels_db.hpp"

namespace lumos::cost {

struct AttentionQuery {
  int64_t batch = 1, heads = 1, seq = 1, head_dim = 128;
  bool causal = false;
  bool backward = false;
  Dtype dtype = Dtype::kBf16;
  AttentionImpl impl = AttentionImpl::kFlash3;  // flash3, cudnn or flash2 (tables)
};

struct AttentionEstimate {
  double time_us = 0;
  double flops = 0;   // the convention of the tables: fwd 4*b*s^2*h*d (halved when causal)
  double tflops = 0;  // table throughput after interpolation and GPU scaling
  std::string table;  // which table answered
};

AttentionEstimate attention_time(const KernelsDb& db, const GpuSpec& gpu, const AttentionQuery& q);

}  // namespace lumos::cost
