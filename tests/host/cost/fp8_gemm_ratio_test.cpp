// FP8 against BF16 GEMM time on the per-rank shapes of the dgxc-benchmarking Llama 3.1 layouts
// (docs/benchmarks.md, the FP8/BF16 row): the twelve GEMMs of one layer (QKV, attention
// projection, FC1, FC2; forward, data gradient, weight gradient) of 70B (TP 4, CP 2) and 405B
// (TP 8, CP 2), 4096 tokens per micro-batch. The bounds come from published figures, not from the
// model: FP8 cannot beat BF16 by more than the ratio of the tensor-core peaks (989 / 1979 TFLOP/s,
// calibration.md §1.1), and on shapes this large FP8 kernels run at 1.7x (DeepGEMM's block-scaled
// 4096x7168x16384, 1358 TFLOP/s, against the BF16 MAMF 794.5) to 2.0x BF16 (tilelang's FP8 and
// FP16 GEMMs at 8192x8192xK on H800, K >= 2048: 1.90-2.01x), so no layer of these models may be
// priced at less than 1.6x.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cost/gemm_model.hpp"

using namespace lumos::cost;

namespace {

struct Layer {
  const char* name;
  int64_t tokens, hidden, q, kv, ffn, tp;  // ffn: SwiGLU's inner size (FC1 is twice as wide)
};

struct Gemm {
  std::string what;
  int64_t m, n, k;
};

// Megatron's GEMMs of one layer on one tensor-parallel rank, as host/model/step_costs.cpp builds
// them: forward Y[T, N] = X[T, K] W[K, N]; data gradient [T, K] = dY[T, N] W^T; weight gradient
// [K, N] = X^T dY, summed over the T tokens.
std::vector<Gemm> layer_gemms(const Layer& l) {
  const int64_t t = l.tp, T = l.tokens, h = l.hidden;
  const Gemm fwd[] = {{"qkv", T, (l.q + 2 * l.kv) / t, h},
                      {"proj", T, h, l.q / t},
                      {"fc1", T, 2 * l.ffn / t, h},
                      {"fc2", T, h, l.ffn / t}};
  std::vector<Gemm> out;
  for (const Gemm& g : fwd) {
    out.push_back(g);
    out.push_back({g.what + " dgrad", g.m, g.k, g.n});
    out.push_back({g.what + " wgrad", g.k, g.n, g.m});
  }
  return out;
}

double layer_ratio(const Layer& l) {
  const KernelsDb& db = embedded_db();
  const GpuSpec& h100 = db.gpu("h100");
  double bf16 = 0, fp8 = 0;
  for (const Gemm& g : layer_gemms(l)) {
    const double b = gemm_time(db, h100, {g.m, g.n, g.k, 1, Dtype::kBf16}).time_us;
    const double f = gemm_time(db, h100, {g.m, g.n, g.k, 1, Dtype::kFp8}).time_us;
    std::printf("  %-5s %-10s %6lldx%6lldx%6lld  bf16 %8.1f us  fp8 %8.1f us  ratio %.3f\n", l.name,
                g.what, static_cast<long long>(g.m), static_cast<long long>(g.n),
                static_cast<long long>(g.k), b, f, f / b);
    EXPECT_GE(f / b, 989.0 / 1979.0) << l.name << " " << g.what;
    bf16 += b, fp8 += f;
  }
  std::printf("  %s layer: bf16 %.0f us, fp8 %.0f us, ratio %.3f\n", l.name, bf16, fp8, fp8 / bf16);
  return fp8 / bf16;
}

}  // namespace

TEST(Fp8GemmRatio, LlamaLayersOfTheDgxcLayoutsRunNearTwiceAsFastInFp8) {
  const Layer l70{"70b", 4096, 8192, 8192, 1024, 28672, 4};
  const Layer l405{"405b", 4096, 16384, 16384, 1024, 53248, 8};
  const double r70 = layer_ratio(l70), r405 = layer_ratio(l405);
  for (double r : {r70, r405}) {
    EXPECT_GT(r, 0.5);      // the peak ratio
    EXPECT_LT(r, 1 / 1.6);  // at least 1.6x on shapes this large
  }
  // 405B's GEMMs are larger in K and N than 70B's: FP8 gains at least as much on them.
  EXPECT_LE(r405, r70);
}
