// What a model-driven step graph costs in memory, so that whoever builds many of them at once (a
// layout search, a sweep) can keep within a budget from a graph's node count alone.
#pragma once

namespace lumos::model {

// What an estimate holds per graph node at its peak (graph, edges, metadata, replay), measured on
// GPT-3 175B layouts of 1.2 M and 2.1 M nodes: 246-249 bytes per node (docs/benchmarks.md).
constexpr double kEstimateBytesPerNode = 256;

}  // namespace lumos::model
