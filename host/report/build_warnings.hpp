// Warnings about a trace that the graph builder could model but whose numbers deserve doubt,
// printed on stderr by the commands that build a graph from a trace.
#pragma once
#include <ostream>

#include "graph/graph_builder.hpp"

namespace lumos::report {

// One line per problem found (none for a consistent trace): GPU ops that start before their
// launch call, i.e. CPU and GPU clocks that disagree.
void build_warnings(std::ostream& err, const graph::BuildStats& s);

}  // namespace lumos::report
