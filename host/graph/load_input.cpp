#include "graph/load_input.hpp"

#include "graph/graph_file.hpp"
#include "trace/demo_trace.hpp"
#include "trace/kineto_loader.hpp"

namespace lumos::graph {

LoadedInput load_input(const std::string& path) {
  LoadedInput in;
  if (path.empty()) {
    in.label = "<embedded demo trace>";
    const std::string json = trace::demo_trace_json();
    in.table = trace::parse_trace_bytes(json.data(), json.size(), in.label);
  } else if (path != "-" && is_graph_file(path)) {  // false for anything but a regular file
    in.label = path;
    in.graph = read_graph_file(path);
    return in;
  } else {  // load_trace refuses folders, FIFOs and devices; "-" is standard input
    in.label = path == "-" ? "<stdin>" : path;
    in.table = trace::load_trace(path);
  }
  BuildResult b = build_graph(*in.table);
  in.graph = std::move(b.graph);
  in.stats = b.stats;
  return in;
}

}  // namespace lumos::graph
