#include "graph/load_input.hpp"

#include <filesystem>

#include "graph/graph_file.hpp"
#include "graph/multi_rank.hpp"
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

std::vector<const trace::EventTable*> LoadedInput::tables() const {
  std::vector<const trace::EventTable*> out;
  if (table) out.push_back(&*table);
  for (const auto& t : rank_tables) out.push_back(&t);
  return out;
}

LoadedInput load_job(const std::string& path) {
  std::error_code ec;
  if (path.empty() || path == "-" || !std::filesystem::is_directory(path, ec))
    return load_input(path);
  LoadedInput in;
  in.label = path;
  MultiRankResult m = load_multi_rank(path, false, &in.rank_tables);
  in.graph = std::move(m.graph);
  in.warnings = std::move(m.warnings);
  return in;
}

}  // namespace lumos::graph
