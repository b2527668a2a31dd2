// The lumos command's operator new: when a command turns it on (set_huge_pages_for_new), large
// blocks are asked for huge pages (common/huge_pages.hpp). That covers the buffers libraries
// allocate for themselves (simdjson's structural index of a trace, as large as the trace) as well
// as the graph's vectors. Linked into the command only, not into the libraries, so that tests and
// embedders keep their own allocator.
//
// libstdc++'s array and nothrow forms call this one, and its operator delete frees with free(),
// so replacing this one form keeps every new and delete pair matched. Under the sanitizers,
// which replace new and delete as a family to check their pairing, it is left out.
#include <cstdlib>
#include <new>

#include "common/huge_pages.hpp"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define LUMOS_SANITIZED_NEW 1
#endif
#endif
#ifndef LUMOS_SANITIZED_NEW
void* operator new(std::size_t n) {
  for (;;) {
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
      if (n >= lumos::common::kHugePageMinBlockBytes && lumos::common::huge_pages_for_new())
        lumos::common::advise_huge_pages(p, n);
      return p;
    }
    // As the standard's operator new: the new-handler may free memory and let it try again.
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
}
#endif
#endif
