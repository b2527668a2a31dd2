// Resolves what a subcommand was pointed at: a trace file, a .lgraph file, or nothing (the
// embedded demo trace).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/graph_builder.hpp"
#include "trace/event_table.hpp"

namespace lumos::graph {

struct LoadedInput {
  std::string label;
  std::optional<trace::EventTable> table;  // absent for a .lgraph input and a folder
  Graph graph;                             // whole-trace graph
  BuildStats stats;
  std::vector<trace::EventTable> rank_tables;  // a folder: every rank's trace, in file order
  std::vector<std::string> warnings;           // a folder: problems accepted, one line each

  // The traces behind the graph: the one table, or every rank's; empty for a .lgraph input.
  std::vector<const trace::EventTable*> tables() const;
};

// path empty = the embedded demo trace; "-" = a trace (JSON or gzip, not .lgraph) on standard
// input. Throws InputError for a folder, FIFO or device, and for input over max_trace_bytes().
LoadedInput load_input(const std::string& path);

// As load_input, and a folder of one job's per-rank traces too (the multi-rank graph, as
// `lumos replay DIR` builds it).
LoadedInput load_job(const std::string& path);

}  // namespace lumos::graph
