// Large buffers are marked for transparent huge pages (the "hg" flag of their mapping in
// /proc/self/smaps), small ones are not.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/file_bytes.hpp"
#include "common/huge_pages.hpp"

namespace lumos::common {
namespace {

// The VmFlags line of the mapping that holds `p`, or "" when /proc/self/smaps has none.
std::string vm_flags_of(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
      inside = lo <= a && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool has_flag(const std::string& vm_flags, const std::string& flag) {
  std::istringstream words(vm_flags);
  std::string w;
  while (words >> w)
    if (w == flag) return true;
  return false;
}

// A fresh mapping of `n` bytes, unmapped at the end of the scope.
struct Mapping {
  explicit Mapping(size_t n) : n_(n) {
    p_ = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() {
    if (p_ != MAP_FAILED) ::munmap(p_, n_);
  }
  char* mid() const { return static_cast<char*>(p_) + n_ / 2; }
  void* p_;
  size_t n_;
};

// Whether this kernel takes the hint at all (built without transparent huge pages it does not).
bool kernel_takes_the_hint() {
  Mapping m(size_t{4} << 20);
  return m.p_ != MAP_FAILED && ::madvise(m.p_, m.n_, MADV_HUGEPAGE) == 0 &&
         has_flag(vm_flags_of(m.mid()), "hg");
}

TEST(HugePages, LargeBlockIsMarkedAndSmallOneIsNot) {
  if (!kernel_takes_the_hint()) GTEST_SKIP() << "no transparent huge pages here";
  Mapping small(kHugePageMinBlockBytes), large(4 * kHugePageMinBlockBytes);
  ASSERT_NE(small.p_, MAP_FAILED);
  ASSERT_NE(large.p_, MAP_FAILED);
  advise_huge_pages(small.p_, kHugePageMinBlockBytes - 1);
  advise_huge_pages(large.p_, large.n_);
  EXPECT_FALSE(has_flag(vm_flags_of(small.mid()), "hg"));
  EXPECT_TRUE(has_flag(vm_flags_of(large.mid()), "hg"));
}

TEST(HugePages, InflatedTraceBufferIsMarked) {
  if (!kernel_takes_the_hint()) GTEST_SKIP() << "no transparent huge pages here";
  ByteBuffer b;
  b.resize(4 * kHugePageMinBlockBytes);  // malloc maps a block this large on its own
  EXPECT_TRUE(has_flag(vm_flags_of(b.data() + b.size() / 2), "hg"));
}

}  // namespace
}  // namespace lumos::common
