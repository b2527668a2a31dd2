// Freed pages go back to the system only once the process holds more than its budget: below it a
// layout search keeps them for the next graph (docs/design.md, "Sweeps").
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "common/heap_tuning.hpp"

namespace {

// Touches `n` bytes in small blocks (kept in the heap, not mapped apart), then frees them.
void fill_and_free(size_t n) {
  std::vector<std::unique_ptr<char[]>> blocks;
  const size_t block = 64 * 1024;
  for (size_t done = 0; done < n; done += block) {
    blocks.emplace_back(new char[block]);
    std::memset(blocks.back().get(), 1, block);
  }
}

}  // namespace

TEST(HeapTrim, ReadsTheResidentSizeOfThisProcess) {
  const double before = lumos::resident_bytes();
#ifdef __linux__
  ASSERT_GT(before, 0.0);
  std::vector<char> touched(size_t{32} << 20, 1);
  EXPECT_GE(lumos::resident_bytes(), before + 24.0 * (1 << 20));
  EXPECT_EQ(touched[12345], 1);
#endif
}

// AddressSanitizer's allocator (g++ defines __SANITIZE_ADDRESS__) keeps freed memory in its own
// quarantine, out of glibc's reach.
TEST(HeapTrim, KeepsFreedPagesBelowTheLimitAndGivesThemBackAbove) {
#if defined(__GLIBC__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
  lumos::keep_freed_graph_memory();
  fill_and_free(size_t{48} << 20);
  const double held = lumos::resident_bytes();
  EXPECT_FALSE(lumos::trim_heap_above(held + 1e9));
  EXPECT_GE(lumos::resident_bytes(), held - 4.0 * (1 << 20)) << "pages went back below the limit";
  EXPECT_TRUE(lumos::trim_heap_above(held / 2));
  EXPECT_LT(lumos::resident_bytes(), held - 24.0 * (1 << 20)) << "the freed 48 MiB stayed";
#else
  GTEST_SKIP()
      << "glibc's own heap on Linux only (not under AddressSanitizer, whose allocator keeps "
         "freed memory itself): elsewhere the heap is left as the allocator keeps it";
#endif
}
