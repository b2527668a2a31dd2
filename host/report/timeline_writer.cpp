#include "report/timeline_writer.hpp"

#include <set>

#include "common/atomic_file.hpp"
#include "common/json_writer.hpp"

namespace lumos::report {

using graph::Graph;
using graph::NodeId;
using graph::ResourceKind;

void write_timeline(const Graph& g, const replay::ReplayResult& r, const std::string& path) {
  write_output(path, [&](std::ostream& os) {
    common::JsonWriter w(os, common::JsonWriter::Document::plain);
    w.begin_object();
    w.field("displayTimeUnit", "ms");
    w.key("traceEvents").begin_array();
    // Process ids: CPU threads keep their pid; GPU streams go under "GPU <device>".
    std::set<std::pair<int64_t, bool>> procs;
    for (const auto& res : g.resources) procs.insert({res.a, res.kind == ResourceKind::kStream});
    for (const auto& [id, gpu] : procs) {
      w.begin_object();
      w.field("ph", "M").field("name", "process_name");
      w.field("pid", gpu ? "GPU " + std::to_string(id) : "CPU " + std::to_string(id));
      w.key("args")
          .begin_object()
          .field("name", gpu ? "GPU " + std::to_string(id) : "CPU process " + std::to_string(id))
          .end_object();
      w.end_object();
    }
    for (NodeId v = 1; v < g.num_nodes(); ++v) {
      const uint32_t res = g.resource[v];
      if (res == graph::kNoResource) continue;
      const auto& rr = g.resources[res];
      const bool gpu = rr.kind == ResourceKind::kStream;
      w.begin_object();
      w.field("ph", "X");
      w.field("cat", graph::to_string(g.kind[v]));
      w.field("name", g.names[g.name[v]]);
      w.field("pid", gpu ? "GPU " + std::to_string(rr.a) : "CPU " + std::to_string(rr.a));
      w.field("tid", gpu ? "stream " + std::to_string(rr.b) : "thread " + std::to_string(rr.b));
      w.field("ts", r.start_us[v]);
      w.field("dur", r.finish_us[v] - r.start_us[v]);
      w.key("args").begin_object();
      w.field("class", graph::to_string(g.cls[v]));
      w.field("measured_ts", g.measured_start_us[v]);
      if (g.event[v] >= 0) w.field("trace_event", g.event[v]);
      if (g.step[v] >= 0) w.field("step", g.steps[g.step[v]].name);
      w.end_object();
      w.end_object();
    }
    w.end_array();
    w.end_object();
    os << '\n';
  });
}

}  // namespace lumos::report
