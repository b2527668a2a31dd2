#include "cli/cost_classify.hpp"

#include <iostream>
#include <string>

#include "cli/cost_options.hpp"
#include "cli/input_options.hpp"
#include "common/error.hpp"
#include "graph/graph_file.hpp"
#include "report/cost_report.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/trace_classification.hpp"

namespace lumos::cli {

int cost_classify(int argc, char** argv) {
  CostOptions c("lumos cost classify",
                "Classify a trace's GPU time by kernel class and compare the cost model with the "
                "measured GEMM and NCCL kernels (on the traced GPU, when kernels_db knows it).");
  c.o.positional_help("TRACE").add_options()("input", "trace", arg<std::string>())(
      "verbose", "list every priced kernel");
  add_input_options(c.o);
  c.o.parse_positional({"input"});
  if (!c.parse(argc, argv,
               {"lumos cost classify trace.json.gz",
                "lumos cost classify trace.json.gz --verbose --json"}))
    return 0;
  apply_input_options(c.a);
  LUMOS_EXPECT(c.has("input"), "lumos cost classify: missing TRACE");
  // The classification reads the trace's events (kernel names, shapes, GPU): a graph file is
  // named for what it is rather than parsed as JSON.
  LUMOS_EXPECT(c.str("input") == "-" || !graph::is_graph_file(c.str("input")),
               c.str("input") +
                   ": a .lgraph graph file; lumos cost classify reads a Kineto trace (JSON, "
                   "optionally gzip): give the trace it was ingested from");
  const trace::TraceClassification r =
      trace::classify_trace(*c.db, trace::load_trace(c.str("input")));
  if (c.has("json")) return report::classification_json(std::cout, r), 0;
  return report::classification_text(std::cout, r, c.has("verbose")), 0;
}

}  // namespace lumos::cli
