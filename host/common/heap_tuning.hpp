// Heap settings for commands that build one large graph after another (sweeps, layout searches).
#pragma once

namespace lumos {

// Keeps freed memory in the heap, not mapped afresh for each graph's vectors nor trimmed between
// graphs, which saves faulting its pages in again. 32 MiB is the largest mmap threshold glibc
// takes; each heap keeps at most 64 MiB untrimmed; trim_heap_above gives the rest back when the
// process grows past its budget. Hints only: a refusal is harmless.
void keep_freed_graph_memory();

// The process's resident bytes (/proc/self/statm), or 0 where it cannot be read.
double resident_bytes();

// Gives the pages of freed memory back to the system when the process holds more than
// `limit_bytes` resident, so that a memory budget bounds the process and not only the graphs
// alive at once. Below the limit the pages stay: the next graph reuses them without faulting
// them in again, which is most of a layout search's system time when every graph is trimmed.
// Returns whether it trimmed.
bool trim_heap_above(double limit_bytes);

}  // namespace lumos
