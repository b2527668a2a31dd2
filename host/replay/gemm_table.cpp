#include "replay/gemm_table.hpp"

#include "cost/dtype.hpp"

namespace lumos::replay {

uint32_t GemmPricing::priced_nodes() const {
  uint32_t n = 0;
  for (int32_t k : node_key) n += k >= 0;
  return n;
}

uint32_t GemmPricing::priced_gemm_nodes() const {
  uint32_t n = 0;
  for (int32_t k : node_key) n += k >= 0 && dtype[static_cast<size_t>(k)] != kRatioKey;
  return n;
}

BatchGemmView GemmPricing::view() const {
  BatchGemmView v;
  v.node_key = node_key.data();
  v.shape = shape.data();
  v.dtype = dtype.data();
  v.traced_us = traced_us.data();
  v.params = params.data();
  v.variant_gpu = variant_gpu.data();
  v.ratio = ratio.empty() ? nullptr : ratio.data();
  v.gpu_speed = gpu_speed.empty() ? nullptr : gpu_speed.data();
  v.num_dtypes = cost::kNumDtypes;
  v.gpus = gpus();
  return v;
}

}  // namespace lumos::replay
