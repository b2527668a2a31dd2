// The GPU backend's tile choice (replay::batch_tile_variants, host arithmetic in
// replay/batch_update.hpp), checked without a GPU: the tile fits in 80% of the free memory, is
// never wider than the batch, is whole warps when the batch is split, and is 0 when nothing fits.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "replay/batch_update.hpp"

using lumos::replay::batch_tile_bytes_per_variant;
using lumos::replay::batch_tile_variants;

namespace {

// Free bytes whose 80% is exactly `variants` variants of (rows, steps).
uint64_t free_for(uint64_t variants, uint32_t nodes, uint32_t steps) {
  const uint64_t bytes = variants * batch_tile_bytes_per_variant(nodes, steps);
  EXPECT_EQ(bytes % 8, 0u);
  return bytes / 8 * 10;
}

}  // namespace

TEST(TileChoice, BytesPerVariantCountStatePlanesStepsAndOutputs) {
  // 16 bytes of state per register, 16 per step (end and start; at least one row), 16 of outputs.
  EXPECT_EQ(batch_tile_bytes_per_variant(1000, 0), 1000u * 16 + 16 + 16);
  EXPECT_EQ(batch_tile_bytes_per_variant(1000, 1), 1000u * 16 + 16 + 16);
  EXPECT_EQ(batch_tile_bytes_per_variant(1000, 3), 1000u * 16 + 48 + 16);
  // No 32-bit overflow on the largest graph.
  const uint32_t big = std::numeric_limits<uint32_t>::max();
  EXPECT_EQ(batch_tile_bytes_per_variant(big, big), uint64_t{big} * 16 + uint64_t{big} * 16 + 16);
}

TEST(TileChoice, TheWholeBatchWhenItFits) {
  EXPECT_EQ(batch_tile_variants(free_for(1000, 5000, 2), 5000, 2, 1000), 1000u);
  EXPECT_EQ(batch_tile_variants(free_for(1000, 5000, 2), 5000, 2, 999), 999u);
  EXPECT_EQ(batch_tile_variants(free_for(1, 5000, 2), 5000, 2, 1), 1u);
  // An H200's free memory and 16384 variants of a 100K-node graph: one tile.
  EXPECT_EQ(batch_tile_variants(uint64_t{139} << 30, 100000, 4, 16384), 16384u);
  // Free memory past any batch: no overflow, the batch.
  EXPECT_EQ(batch_tile_variants(std::numeric_limits<uint64_t>::max(), 2, 1,
                                std::numeric_limits<uint32_t>::max()),
            std::numeric_limits<uint32_t>::max());
}

TEST(TileChoice, ZeroWhenNotOneVariantFits) {
  EXPECT_EQ(batch_tile_variants(0, 5000, 2, 10), 0u);
  // All of the free memory would hold one variant, but 80% of it does not.
  EXPECT_EQ(batch_tile_variants(batch_tile_bytes_per_variant(5000, 2), 5000, 2, 10), 0u);
  EXPECT_EQ(batch_tile_variants(free_for(1, 5000, 2) - 10, 5000, 2, 10), 0u);
}

TEST(TileChoice, SplitBatchesGetWholeWarps) {
  EXPECT_EQ(batch_tile_variants(free_for(100, 5000, 2), 5000, 2, 1000), 96u);
  EXPECT_EQ(batch_tile_variants(free_for(64, 5000, 2), 5000, 2, 1000), 64u);
  EXPECT_EQ(batch_tile_variants(free_for(63, 5000, 2), 5000, 2, 1000), 32u);
  EXPECT_EQ(batch_tile_variants(free_for(32, 5000, 2), 5000, 2, 1000), 32u);
  // Under a warp fits: as many as fit.
  EXPECT_EQ(batch_tile_variants(free_for(31, 5000, 2), 5000, 2, 1000), 31u);
  EXPECT_EQ(batch_tile_variants(free_for(1, 5000, 2), 5000, 2, 1000), 1u);
}

TEST(TileChoice, TheTileFitsAndAWarpMoreWouldNot) {
  for (const uint32_t nodes : {2u, 977u, 100000u, 3000000u})
    for (const uint32_t steps : {0u, 1u, 7u})
      for (const uint64_t free_bytes :
           {uint64_t{1} << 24, uint64_t{3} << 30, uint64_t{139} << 30}) {
        const uint32_t variants = 1u << 20;
        const uint32_t tile = batch_tile_variants(free_bytes, nodes, steps, variants);
        const uint64_t per = batch_tile_bytes_per_variant(nodes, steps);
        const uint64_t budget = free_bytes / 10 * 8;
        SCOPED_TRACE(::testing::Message()
                     << nodes << " nodes, " << steps << " steps, " << free_bytes << " bytes free");
        EXPECT_LE(tile, variants);
        EXPECT_LE(tile * per, budget);
        if (tile < variants) {
          if (tile >= 32) {
            EXPECT_EQ(tile % 32, 0u);
            EXPECT_GT((tile + 32) * per, budget);
          } else {
            EXPECT_GT((tile + 1) * per, budget);
          }
        }
      }
}
