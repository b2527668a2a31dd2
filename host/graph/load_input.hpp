// Resolves what a subcommand was pointed at: a trace file, a .lgraph file, or nothing (the
// embedded demo trace).
#pragma once
#include <optional>
#include <string>

#include "graph/graph_builder.hpp"
#include "trace/event_table.hpp"

namespace lumos::graph {

struct LoadedInput {
  std::string label;
  std::optional<trace::EventTable> table;  // absent for a .lgraph input
  Graph graph;                             // whole-trace graph
  BuildStats stats;
};

// path empty = the embedded demo trace; "-" = a trace (JSON or gzip, not .lgraph) on standard
// input. Throws InputError for a folder, FIFO or device, and for input over max_trace_bytes().
LoadedInput load_input(const std::string& path);

}  // namespace lumos::graph
