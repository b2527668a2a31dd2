// The binary graph file (.lgraph): parse a large trace once, replay it many times.
//
// Layout, little-endian: magic "LGRAPH\0\0", u32 version, u32 section count, then sections,
// each: u32 tag, u64 byte length, payload. Unknown tags are skipped, so a newer writer's extra
// sections do not break an older reader; a newer major version is rejected with a clear message.
#pragma once
#include <string>

#include "graph/graph.hpp"

namespace lumos::graph {

constexpr uint32_t kGraphFileVersion = 1;

// Writes atomically (temporary file, then rename).
void write_graph_file(const Graph& g, const std::string& path);

// Throws InputError naming the file and what is wrong (magic, version, truncation, invariants).
Graph read_graph_file(const std::string& path);

// True when the file starts with the graph magic.
bool is_graph_file(const std::string& path);

}  // namespace lumos::graph
