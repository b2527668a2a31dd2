// Transparent huge pages for large blocks: a trace's inflated JSON, simdjson's index of it and
// the graph's arrays are tens of MB each, and faulting them in 4 KiB at a time (each page zeroed
// and charged to the process separately) cost about a third of a whole `lumos replay`
// (docs/design.md, "Reading traces").
#pragma once
#include <cstddef>

namespace lumos::common {

// Blocks from this size on are worth the request (one system call each).
inline constexpr size_t kHugePageMinBlockBytes = size_t{8} << 20;

// Asks the kernel to back the whole 2 MiB pages inside [p, p + n) with huge pages, when n is at
// least kHugePageMinBlockBytes. A hint only: a kernel without them, or with them off, leaves the
// block as it is.
void advise_huge_pages(void* p, size_t n);

// Whether the lumos binary's operator new asks for huge pages for large blocks
// (huge_page_new.cpp). Off unless a command turns it on: `lumos replay`, measured to gain by it;
// commands that allocate and free large graphs by the thousand (sweeps, searches) were not
// measured with it and keep the standard behaviour.
void set_huge_pages_for_new(bool on);
bool huge_pages_for_new();

// Faults [p, p + n) in for writing without changing its bytes (MADV_POPULATE_WRITE), so that
// another thread may do it while one writes the block: the split parse's second thread faults the
// inflated trace's buffer in while this one inflates into it. False where the kernel lacks it
// (before Linux 5.14) or the range is not mapped.
bool populate_for_write(void* p, size_t n);

}  // namespace lumos::common
