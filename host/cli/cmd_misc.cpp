// lumos ingest, lumos demo-trace, lumos info.
#include <cxxopts.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/help_text.hpp"
#include "cli/input_options.hpp"
#include "cli/mpi_world.hpp"
#include "cli/path_options.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "engine/engine.hpp"
#include "graph/graph_file.hpp"
#include "graph/load_input.hpp"
#include "trace/demo_trace.hpp"

namespace lumos::cli {

int cmd_ingest(int argc, char** argv) {
  cxxopts::Options opts(
      "lumos ingest",
      "Parse a trace once and write its execution graph as a binary .lgraph file, "
      "which `lumos replay` accepts.");
  opts.positional_help("TRACE.json[.gz] -o FILE.lgraph");
  opts.add_options()("input", "trace file", cxxopts::value<std::string>())(
      "o,output", "graph file to write", cxxopts::value<std::string>())("h,help", "show this help");
  add_input_options(opts);
  opts.parse_positional({"input"});
  const auto args = parse_options(opts, argc, argv);
  if (args.count("help")) {
    std::cout << help_with_examples(opts, {"lumos ingest trace.json.gz -o trace.lgraph",
                                           "lumos replay trace.lgraph  # replays without parsing"})
              << '\n';
    return 0;
  }
  refuse_unexpected_args(args, "lumos ingest");
  apply_input_options(args);
  check_paths("lumos ingest", args, {{"input", "the input trace"}}, {{"output", "-o"}});
  LUMOS_EXPECT(args.count("input"), "lumos ingest: missing TRACE (see --help)");
  LUMOS_EXPECT(args.count("output"), "lumos ingest: missing -o FILE.lgraph");
  LUMOS_EXPECT(!is_stdout(args["output"].as<std::string>()),
               "lumos ingest: -o -: a .lgraph file is binary; give a file name");
  check_output_path(args["output"].as<std::string>());  // before the parse: fail fast
  const graph::LoadedInput in = graph::load_input(args["input"].as<std::string>());
  graph::write_graph_file(in.graph, args["output"].as<std::string>());
  std::cout << "wrote " << args["output"].as<std::string>() << ": " << in.graph.num_nodes()
            << " nodes, " << in.graph.num_edges() << " edges, " << in.graph.num_waves()
            << " wavefronts, " << in.graph.steps.size() << " steps\n";
  return 0;
}

int cmd_demo_trace(int argc, char** argv) {
  cxxopts::Options opts("lumos demo-trace", "Write the embedded demo trace (Kineto JSON).");
  constexpr CountOption kSteps{"steps", 1, 100000};
  opts.add_options()("o,output", "file to write (- for standard output)",
                     cxxopts::value<std::string>())(kSteps.name,
                                                    count_help("ProfilerSteps", kSteps),
                                                    count_value("3"))("h,help", "show this help");
  const auto args = parse_options(opts, argc, argv);
  if (args.count("help")) {
    std::cout << help_with_examples(opts, {"lumos demo-trace -o demo.json",
                                           "lumos demo-trace --steps 5 -o - | gzip > demo.json.gz"})
              << '\n';
    return 0;
  }
  refuse_unexpected_args(args, "lumos demo-trace");
  LUMOS_EXPECT(args.count("output"), "lumos demo-trace: missing -o FILE");
  trace::DemoOptions o;
  o.steps = static_cast<int>(count_of(args, kSteps, "lumos demo-trace: "));
  const std::string json = trace::demo_trace_json(o);
  write_output(args["output"].as<std::string>(), [&](std::ostream& os) { os << json; });
  return 0;
}

int cmd_info(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout << "The version, the GPU devices and batch-replay backend this build can use, and "
                 "whether it was built with MPI\nUsage:\n  lumos info\n\nExamples:\n  lumos info\n"
                 "  lumos --version\n";
    return 0;
  }
  refuse_unexpected_args(std::vector<std::string>(argv + 1, argv + argc), "lumos info");
  std::cout << "lumos " << LUMOS_VERSION << "\n";
  for (const std::string& line : engine::device_report()) std::cout << line << '\n';
  // The batch engine's auto choice, which sweep, whatif and estimate --search make by default.
  std::cout << "batch replay of sweep, whatif and estimate --search: "
            << engine::auto_backend_reason() << '\n';
  std::cout << (built_with_mpi() ? "mpi: yes (mpirun -n N lumos sweep splits a sweep over ranks)\n"
                                 : "mpi: no (sweeps split with --shard i/n)\n");
  return 0;
}

}  // namespace lumos::cli
