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

}  // namespace lumos::common
