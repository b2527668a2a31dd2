// The `lumos` commands, dispatched by name: what main() runs and what the Python module calls
// (python/src/lumos_core.cpp). Errors are thrown (common/error.hpp), never printed here.
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/help_text.hpp"
#include "common/did_you_mean.hpp"
#include "common/error.hpp"

namespace lumos::cli {

namespace {

void usage(std::ostream& os) {
  os << "usage: lumos <command> [options]\n\n"
        "commands:\n"
        "  replay      replay a trace (or .lgraph, or the embedded demo) against its measurement\n"
        "  estimate    estimate a GPT or Llama training iteration from the model alone (no trace)\n"
        "  generate    write that iteration as Kineto traces, one per pipeline stage\n"
        "  whatif      replay a trace under many variants at once (GPUs, speed-ups), Pareto front\n"
        "  sweep       many configurations of a model (layouts x GPUs x networks) through the "
        "batch\n"
        "              engine; variants and Pareto front to CSV\n"
        "  pareto      Pareto front of variants CSVs, or shards' CSVs merged\n"
        "  place       place jobs on a fleet by oSCI, SCI and tSCI; the fleet's total carbon\n"
        "  carbon      energy and carbon of training in one configuration (region or hourly "
        "grid)\n"
        "  report      one self-contained HTML page from a sweep CSV, a replay, an estimate or a\n"
        "              carbon answer (--json): Pareto front, heat map, breakdowns, carbon\n"
        "  ingest      parse a trace once into a binary .lgraph graph file\n"
        "  cost        kernel and collective cost model (gemm, attention, collective, ...)\n"
        "  bench       batch replay throughput (lumos bench batch --nodes N --variants V --backend "
        "cpu|cuda),\n"
        "              estimate calibration and latency (lumos bench estimate)\n"
        "  demo-trace  write the embedded demo trace as Kineto JSON\n"
        "  info        version and visible GPUs\n\n"
        "`lumos <command> --help` describes each command.\n\n"
     << examples_section(
            {"lumos replay trace.json.gz --timeline timeline.json  # measured vs replayed steps",
             "lumos estimate --model gpt3-175b --gpu h100 --tp 8 --pp 8 --dp 16 --gbs 1536",
             "lumos estimate --search --model gpt3-175b --gpus 1024 --gbs 1536 --top 5",
             "lumos sweep -o sweep.csv --pareto pareto.csv  # layouts x GPUs, the Pareto front",
             "lumos carbon --model gpt3-175b --tp 8 --pp 8 --dp 16 --gbs 1536 --region fr"});
}

}  // namespace

int dispatch(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 1 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "replay") return cmd_replay(argc - 1, argv + 1);
  if (cmd == "ingest") return cmd_ingest(argc - 1, argv + 1);
  if (cmd == "cost") return cmd_cost(argc - 1, argv + 1);
  if (cmd == "bench") return cmd_bench(argc - 1, argv + 1);
  if (cmd == "estimate") return cmd_estimate(argc - 1, argv + 1);
  if (cmd == "generate") return cmd_generate(argc - 1, argv + 1);
  if (cmd == "whatif") return cmd_whatif(argc - 1, argv + 1);
  if (cmd == "sweep") return cmd_sweep(argc - 1, argv + 1);
  if (cmd == "pareto") return cmd_pareto(argc - 1, argv + 1);
  if (cmd == "place") return cmd_place(argc - 1, argv + 1);
  if (cmd == "carbon") return cmd_carbon(argc - 1, argv + 1);
  if (cmd == "report") return cmd_report(argc - 1, argv + 1);
  if (cmd == "demo-trace") return cmd_demo_trace(argc - 1, argv + 1);
  if (cmd == "info" || cmd == "--version") return cmd_info(argc - 1, argv + 1);
  std::cerr << "lumos: unknown command '" << cmd << "'"
            << did_you_mean(cmd,
                            {"replay", "ingest", "cost", "bench", "estimate", "generate", "whatif",
                             "sweep", "pareto", "place", "carbon", "demo-trace", "info"})
            << " (see lumos --help)\n";
  return 1;
}

}  // namespace lumos::cli
