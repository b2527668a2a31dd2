// Writes a replayed timeline as Chrome-trace JSON that Perfetto and chrome://tracing open:
// one process per rank's CPU and per GPU, one thread per CPU thread and per stream.
#pragma once
#include <string>

#include "graph/graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::report {

// Writes atomically (or to standard output for "-"); times in µs relative to the graph's t0.
void write_timeline(const graph::Graph& g, const replay::ReplayResult& r, const std::string& path);

}  // namespace lumos::report
