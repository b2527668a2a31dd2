// Random per-class speed factors for the batch-replay tests.
#pragma once
#include <random>

#include "replay/variant_batch.hpp"

namespace lumos::testing {

// `count` variants, every class factor uniform in [0.25, 4].
inline replay::VariantBatch random_variants(uint32_t count, std::mt19937& rng) {
  replay::VariantBatch b = replay::VariantBatch::identity(count);
  std::uniform_real_distribution<float> f(0.25f, 4.0f);
  for (auto& s : b.speed)
    for (auto& x : s) x = f(rng);
  return b;
}

}  // namespace lumos::testing
