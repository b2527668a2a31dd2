// libFuzzer target for the trace loader and graph builder: any input either loads or is rejected
// with an InputError; nothing else (crash, sanitizer report, other exception) is acceptable.
// Build: cmake -DLUMOS_BUILD_FUZZER=ON -DCMAKE_CXX_COMPILER=clang++ ...; run:
//   build-fuzz/trace_loader_fuzzer tests/fuzz/corpus -max_total_time=300
#include <cstddef>
#include <cstdint>

#include "common/error.hpp"
#include "graph/graph_builder.hpp"
#include "replay/reference_replay.hpp"
#include "trace/kineto_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto t =
        lumos::trace::parse_trace_bytes(reinterpret_cast<const char*>(data), size, "fuzz");
    const auto b = lumos::graph::build_graph(t);
    lumos::replay::reference_replay(b.graph);
  } catch (const lumos::InputError&) {
  }
  return 0;
}
