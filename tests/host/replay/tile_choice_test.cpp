// The GPU backend's tile choice (replay::lanes_tile_variants, host arithmetic in
// replay/lanes_thread.hpp), checked without a GPU: the tile's whole blocks of columns fit in 80%
// of the free memory, it is never wider than the batch, it is whole blocks when the batch is
// split, and it is 0 when not one block fits.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "replay/lanes_thread.hpp"

using lumos::replay::kLanesBlockThreads;
using lumos::replay::kLanesPerThread;
using lumos::replay::lanes_column_bytes;
using lumos::replay::lanes_geometry;
using lumos::replay::lanes_tile_variants;

namespace {

constexpr uint64_t kBlock = kLanesPerThread * kLanesBlockThreads;

// Free bytes whose 80% is exactly `blocks` blocks of columns of (registers, steps).
uint64_t free_for(uint64_t blocks, uint32_t regs, uint32_t steps, bool path = true) {
  const uint64_t bytes = blocks * kBlock * lanes_column_bytes(regs, steps, path);
  EXPECT_EQ(bytes % 8, 0u);
  return bytes / 8 * 10;
}

}  // namespace

TEST(TileChoice, ColumnBytesCountGlobalRegistersStepsAndOutputs) {
  // 16 bytes per register with the path, 8 without; 16 per step (end and start; at least one
  // row); 16 of outputs.
  EXPECT_EQ(lanes_column_bytes(1000, 0, true), 1000u * 16 + 16 + 16);
  EXPECT_EQ(lanes_column_bytes(1000, 1, true), 1000u * 16 + 16 + 16);
  EXPECT_EQ(lanes_column_bytes(1000, 3, true), 1000u * 16 + 48 + 16);
  EXPECT_EQ(lanes_column_bytes(1000, 3, false), 1000u * 8 + 48 + 16);
  // No 32-bit overflow on the largest graph.
  const uint32_t big = std::numeric_limits<uint32_t>::max();
  EXPECT_EQ(lanes_column_bytes(big, big, true), uint64_t{big} * 16 + uint64_t{big} * 16 + 16);
}

TEST(TileChoice, TheWholeBatchWhenItsBlocksFit) {
  EXPECT_EQ(lanes_tile_variants(free_for(4, 5000, 2), 5000, 2, 4 * kBlock, true), 4 * kBlock);
  EXPECT_EQ(lanes_tile_variants(free_for(4, 5000, 2), 5000, 2, 4 * kBlock - 7, true),
            4 * kBlock - 7);
  // One variant takes a whole block of columns.
  EXPECT_EQ(lanes_tile_variants(free_for(1, 5000, 2), 5000, 2, 1, true), 1u);
  // An H200's free memory and 16384 variants of a program with 1,000 global registers.
  EXPECT_EQ(lanes_tile_variants(uint64_t{139} << 30, 1000, 4, 16384, true), 16384u);
  // Free memory past any batch: no overflow, the batch.
  EXPECT_EQ(lanes_tile_variants(std::numeric_limits<uint64_t>::max(), 2, 1,
                                std::numeric_limits<uint32_t>::max(), true),
            std::numeric_limits<uint32_t>::max());
}

TEST(TileChoice, ZeroWhenNotOneBlockFits) {
  EXPECT_EQ(lanes_tile_variants(0, 5000, 2, 10, true), 0u);
  // Memory for one variant's column is not memory for a block of them.
  EXPECT_EQ(lanes_tile_variants(10 * lanes_column_bytes(5000, 2, true), 5000, 2, 10, true), 0u);
  EXPECT_EQ(lanes_tile_variants(free_for(1, 5000, 2) - 10, 5000, 2, 10, true), 0u);
}

TEST(TileChoice, SplitBatchesGetWholeBlocksAndFinishTimesFitTwiceAsMany) {
  EXPECT_EQ(lanes_tile_variants(free_for(3, 5000, 2), 5000, 2, 100000, true), 3 * kBlock);
  EXPECT_EQ(lanes_tile_variants(free_for(3, 5000, 2) - 8, 5000, 2, 100000, true), 2 * kBlock);
  EXPECT_EQ(lanes_tile_variants(free_for(1, 5000, 2), 5000, 2, 100000, true), kBlock);
  // Without the path a register is 8 bytes: (nearly) twice the blocks in the same memory.
  const uint32_t finish = lanes_tile_variants(free_for(3, 5000, 2), 5000, 2, 100000, false);
  EXPECT_EQ(finish % kBlock, 0u);
  EXPECT_GE(finish, 5 * kBlock);
}

TEST(TileChoice, TheTileFitsAndABlockMoreWouldNot) {
  for (const bool path : {true, false})
    for (const uint32_t regs : {1u, 977u, 100000u, 3000000u})
      for (const uint32_t steps : {0u, 1u, 7u})
        for (const uint64_t free_bytes :
             {uint64_t{1} << 24, uint64_t{3} << 30, uint64_t{139} << 30}) {
          const uint32_t variants = 1u << 20;
          const uint32_t tile = lanes_tile_variants(free_bytes, regs, steps, variants, path);
          const uint64_t per = lanes_column_bytes(regs, steps, path);
          const uint64_t budget = free_bytes / 10 * 8;
          SCOPED_TRACE(::testing::Message() << regs << " registers, " << steps << " steps, "
                                            << free_bytes << " bytes free");
          EXPECT_LE(tile, variants);
          // What the kernel allocates for the tile: its stride of whole blocks.
          EXPECT_LE(lanes_geometry(regs, 0, tile, path).stride * per, budget);
          if (tile < variants) {
            EXPECT_EQ(tile % kBlock, 0u);
            EXPECT_GT((tile + kBlock) * per, budget);
          }
        }
}
