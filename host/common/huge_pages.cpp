#include "common/huge_pages.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>

namespace lumos::common {
namespace {
std::atomic<bool> g_huge_pages_for_new{false};
}  // namespace

void set_huge_pages_for_new(bool on) {
  g_huge_pages_for_new.store(on, std::memory_order_relaxed);
}

bool huge_pages_for_new() {
  return g_huge_pages_for_new.load(std::memory_order_relaxed);
}

bool populate_for_write(void* p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n + kPage - 1) & ~(kPage - 1);
  return p != nullptr && n > 0 &&
         ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
#else
  (void)p;
  (void)n;
  return false;
#endif
}

void advise_huge_pages(void* p, size_t n) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kPage = uintptr_t{2} << 20;
  if (p == nullptr || n < kHugePageMinBlockBytes) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kPage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace lumos::common
