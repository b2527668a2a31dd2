#include "replay/gemm_table.hpp"

#include "common/error.hpp"
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

void GemmPricing::validate(uint32_t nodes, uint32_t variants) const {
  LUMOS_EXPECT(node_key.size() == nodes && variant_gpu.size() == variants,
               "batch replay: GEMM pricing does not match the graph and the variants");
  // Every index the engines follow stays inside its table (the CUDA backend reads them too).
  const size_t n = keys(), columns = gpus();
  LUMOS_EXPECT(
      shape.size() == 4 * n && traced_us.size() == n && params.size() % cost::kNumDtypes == 0,
      "batch replay: GEMM pricing tables disagree in size");
  for (int32_t k : node_key)
    LUMOS_EXPECT(k < static_cast<int64_t>(n), "batch replay: a GEMM key is out of range");
  bool ratio_keys = false;
  for (size_t k = 0; k < n; ++k) {
    LUMOS_EXPECT(dtype[k] < cost::kNumDtypes || dtype[k] == kRatioKey,
                 "batch replay: a GEMM dtype is out of range");
    LUMOS_EXPECT(traced_us[k] > 0 && traced_us[k] < 1e300,
                 "batch replay: a priced key's traced time is not positive");
    ratio_keys = ratio_keys || dtype[k] == kRatioKey;
  }
  LUMOS_EXPECT(!ratio_keys || ratio.size() == n * columns,
               "batch replay: the pricing's ratio table does not match its keys and GPUs");
  LUMOS_EXPECT(gpu_speed.empty() || gpu_speed.size() == columns,
               "batch replay: the pricing's speed-ups do not match its GPUs");
  for (double s : gpu_speed)
    LUMOS_EXPECT(s > 0 && s < 1e300, "batch replay: a priced speed-up is not positive");
  LUMOS_EXPECT(
      fast_accum.empty() == fast_accum_speedup.empty() &&
          (fast_accum.empty() || (fast_accum.size() == n && fast_accum_speedup.size() == columns)),
      "batch replay: the pricing's fast-accumulation tables do not match its keys and GPUs");
  for (double s : fast_accum_speedup)
    LUMOS_EXPECT(s >= 1 && s < 1e300,
                 "batch replay: a fast-accumulation speed-up is not a number of at least 1");
  for (double f : ratio)
    LUMOS_EXPECT(f > 0 && f < 1e300, "batch replay: a priced ratio is not positive");
  for (uint16_t gi : variant_gpu)
    LUMOS_EXPECT(gi < columns, "batch replay: a variant's GPU is out of range");
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
  v.fast_accum = fast_accum.empty() ? nullptr : fast_accum.data();
  v.fast_accum_speedup = fast_accum_speedup.empty() ? nullptr : fast_accum_speedup.data();
  v.num_dtypes = cost::kNumDtypes;
  v.gpus = gpus();
  return v;
}

}  // namespace lumos::replay
