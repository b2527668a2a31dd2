// Faulting a block in from another thread leaves its bytes as they are, and the inflater says
// which buffer it inflates into before it writes there (the split parse's second thread faults
// it in meanwhile: docs/design.md, "Reading traces").
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/file_bytes.hpp"
#include "common/huge_pages.hpp"
#include "support/test_util.hpp"

TEST(PopulateForWrite, LeavesTheBytesAsTheyAreWhileAnotherThreadWrites) {
  const size_t n = size_t{16} << 20;
  std::vector<char> block(n, 'a');
  std::thread writer([&] { std::memset(block.data() + n / 2, 'b', n / 2); });
  const bool populated = lumos::common::populate_for_write(block.data(), n);
  writer.join();
  for (size_t i = 0; i < n; i += 4093) ASSERT_EQ(block[i], i < n / 2 ? 'a' : 'b') << i;
  (void)populated;  // false on kernels before 5.14: then nothing was done, which is as good
  EXPECT_FALSE(lumos::common::populate_for_write(nullptr, 0));
}

TEST(PopulateForWrite, TheInflaterNamesItsBufferBeforeWritingIt) {
  std::string text(size_t{1} << 20, ' ');
  for (size_t i = 0; i < text.size(); i += 97) text[i] = 'x';
  const std::string gz = lumos::testing::gzip_string(text);
  std::vector<std::pair<const char*, size_t>> told;
  std::string seen;
  const lumos::common::FileBytes fb = lumos::common::gunzip_bytes(
      gz.data(), gz.size(), 64, "t.json.gz", lumos::common::max_trace_bytes(),
      lumos::common::kTraceLimit, [&](char* p, size_t size) {
        told.emplace_back(p, size);
        seen.assign(p, std::min<size_t>(size, 16));
      });
  ASSERT_EQ(told.size(), 1u);  // a plausible size trailer: one buffer, the text's size
  EXPECT_EQ(told[0].first, fb.data.data());
  EXPECT_EQ(told[0].second, text.size());
  EXPECT_EQ(std::string(fb.data.data(), fb.size), text);
}
