// The `lumos` command: dispatches to subcommands and turns errors into exit codes
// (0 success, 1 bad input or options, 2 internal error).
#include <cxxopts.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "common/error.hpp"

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
        "  ingest      parse a trace once into a binary .lgraph graph file\n"
        "  cost        kernel and collective cost model (gemm, attention, collective, ...)\n"
        "  bench       batch replay throughput (lumos bench batch --nodes N --variants V --backend "
        "cpu|cuda),\n"
        "              estimate calibration and latency (lumos bench estimate)\n"
        "  demo-trace  write the embedded demo trace as Kineto JSON\n"
        "  info        version and visible GPUs\n\n"
        "`lumos <command> --help` describes each command.\n";
}

int run(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 1 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "replay") return lumos::cli::cmd_replay(argc - 1, argv + 1);
    if (cmd == "ingest") return lumos::cli::cmd_ingest(argc - 1, argv + 1);
    if (cmd == "cost") return lumos::cli::cmd_cost(argc - 1, argv + 1);
    if (cmd == "bench") return lumos::cli::cmd_bench(argc - 1, argv + 1);
    if (cmd == "estimate") return lumos::cli::cmd_estimate(argc - 1, argv + 1);
    if (cmd == "generate") return lumos::cli::cmd_generate(argc - 1, argv + 1);
    if (cmd == "whatif") return lumos::cli::cmd_whatif(argc - 1, argv + 1);
    if (cmd == "sweep") return lumos::cli::cmd_sweep(argc - 1, argv + 1);
    if (cmd == "pareto") return lumos::cli::cmd_pareto(argc - 1, argv + 1);
    if (cmd == "place") return lumos::cli::cmd_place(argc - 1, argv + 1);
    if (cmd == "carbon") return lumos::cli::cmd_carbon(argc - 1, argv + 1);
    if (cmd == "demo-trace") return lumos::cli::cmd_demo_trace(argc - 1, argv + 1);
    if (cmd == "info" || cmd == "--version") return lumos::cli::cmd_info(argc - 1, argv + 1);
    std::cerr << "lumos: unknown command '" << cmd << "' (see lumos --help)\n";
    return 1;
  } catch (const lumos::InputError& e) {
    std::cerr << "lumos: " << e.what() << '\n';
    return 1;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "lumos " << cmd << ": " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "lumos: internal error: " << e.what() << '\n';
    return 2;
  }
}

// Whether everything written to standard output reached it. A report sent to a full disk or a
// closed pipe is lost; exit 0 would claim it was delivered.
bool stdout_delivered() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  return flushed && !std::cout.fail() && !std::ferror(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int rc = run(argc, argv);
  if (!stdout_delivered()) {
    const int err = errno;
    std::cerr << "lumos: cannot write to standard output"
              << (err ? std::string(" (") + std::strerror(err) + ")" : std::string()) << '\n';
    if (rc == 0) rc = 1;
  }
  return rc;
}
