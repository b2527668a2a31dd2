// The binary graph file (.lgraph): parse a large trace once, replay it many times.
//
// Layout, little-endian: magic "LGRAPH\0\0", u32 version, u32 section count, u64 file length,
// then sections, each: u32 tag, u64 byte length, payload; then a u32 CRC-32 of every byte before
// it. Unknown tags are skipped, so a newer writer's extra sections do not break an older reader;
// any other version is rejected with a clear message.
//
// A graph file is checked before any use, so that a damaged or hand-edited file is an InputError
// naming the file, the section and the fault, never a crash or a silently different graph: the
// length and the checksum first (a changed byte fails the CRC), then each section against its
// own counts (no array is allocated larger than the bytes that hold it), then the sections
// against each other (graph::validate: offsets, indices, enums, durations, topological order).
#pragma once
#include <string>
#include <string_view>

#include "graph/graph.hpp"

namespace lumos::graph {

// Version 2 added the file length and the checksum.
constexpr uint32_t kGraphFileVersion = 2;

// Writes atomically (temporary file, then rename).
void write_graph_file(const Graph& g, const std::string& path);

// Throws InputError naming the file and what is wrong (magic, version, truncation, checksum,
// section, invariants).
Graph read_graph_file(const std::string& path);

// The same on bytes already in memory; `label` names them in messages.
Graph read_graph_bytes(std::string_view bytes, const std::string& label);

// Recomputes the length and checksum fields of an in-memory graph file (when it is long enough to
// have them). For tests and the fuzzer, which change bytes on purpose and want the checks behind
// the checksum reached.
void reseal_graph_bytes(std::string* bytes);

// True when the file starts with the graph magic.
bool is_graph_file(const std::string& path);

}  // namespace lumos::graph
