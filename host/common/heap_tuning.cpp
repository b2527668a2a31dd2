#include "common/heap_tuning.hpp"

#include <unistd.h>

#include <cstdio>

#ifdef __GLIBC__
#include <malloc.h>  // mallopt, malloc_trim
#endif

namespace lumos {

void keep_freed_graph_memory() {
#ifdef __GLIBC__
  if (mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1) mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
#endif
}

double resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size_pages = 0, resident_pages = 0;
  const int got = std::fscanf(f, "%lu %lu", &size_pages, &resident_pages);
  std::fclose(f);
  if (got != 2) return 0;
  return static_cast<double>(resident_pages) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

bool trim_heap_above(double limit_bytes) {
#ifdef __GLIBC__
  // Unreadable (0): trim, as before the check existed.
  const double resident = resident_bytes();
  if (resident > 0 && resident <= limit_bytes) return false;
  malloc_trim(0);
  return true;
#else
  (void)limit_bytes;
  return false;
#endif
}

}  // namespace lumos
