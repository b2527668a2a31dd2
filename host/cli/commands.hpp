// Subcommands of the `lumos` program. Each returns the exit code; errors are thrown as
// InputError (exit 1) and reported by main().
#pragma once

namespace lumos::cli {

// Runs `lumos ARGS...` (argv[0] is the program, argv[1] the command): the exit code; errors
// are thrown (InputError, cxxopts' exceptions), output goes to std::cout and std::cerr.
int dispatch(int argc, char** argv);

int cmd_replay(int argc, char** argv);
int cmd_ingest(int argc, char** argv);
int cmd_demo_trace(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_cost(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int bench_estimate(int argc, char** argv);  // lumos bench estimate
int bench_whatif(int argc, char** argv);    // lumos bench whatif
int cmd_whatif(int argc, char** argv);
int cmd_estimate(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_pareto(int argc, char** argv);
int cmd_place(int argc, char** argv);
int cmd_carbon(int argc, char** argv);
int cmd_report(int argc, char** argv);

}  // namespace lumos::cli
