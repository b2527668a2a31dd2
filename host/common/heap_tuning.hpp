// Heap settings for commands that build one large graph after another (sweeps, layout searches).
#pragma once
#ifdef __GLIBC__
#include <malloc.h>  // mallopt
#endif

namespace lumos {

// Keeps freed memory in the heap, not mapped afresh for each graph's vectors nor trimmed between
// graphs, which saves faulting its pages in again. 32 MiB is the largest mmap threshold glibc
// takes; each heap keeps at most 64 MiB untrimmed; the sweep trims after each large graph itself.
// Hints only: a refusal is harmless.
inline void keep_freed_graph_memory() {
#ifdef __GLIBC__
  if (mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1) mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
#endif
}

}  // namespace lumos
