// Random execution graphs shaped like the traced ones (serial chains per CPU thread and CUDA
// stream, launch-like edges between them, about 1.1 predecessors per node), for benchmarks and
// differential tests.
#pragma once
#include <cstdint>

#include "graph/graph.hpp"

namespace lumos::graph {

// `resources` chains (half threads, half streams); seeded, so the same arguments give the same
// graph.
Graph synthetic_graph(uint32_t nodes, uint64_t seed, uint32_t resources = 8,
                      double cross_edge_prob = 0.1);

}  // namespace lumos::graph
