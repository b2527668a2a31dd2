// The batch replay's throughput on a synthetic graph shaped like the traces, against the
// reference replay of the same graph in the same run (what `lumos bench batch` measures).
#pragma once
#include <cstdint>
#include <string>

#include "engine/device_projection.hpp"
#include "engine/engine.hpp"
#include "graph/graph.hpp"

namespace lumos::engine {

// Caps checked before the graph is made (docs/design.md, caps before work): synthetic graph
// nodes (as many as the largest step graph an estimate builds), and nodes x variants of one
// launch (the 10 M-node x 4,096-variant benchmark of docs/benchmarks.md fits; 10^11 would take
// tens of seconds a launch on a CPU, and its state outgrows a GPU's memory).
constexpr uint64_t kMaxBenchNodes = 20'000'000;
constexpr double kMaxBenchNodeVariants = 5e10;

struct BatchBenchmarkRequest {
  uint32_t nodes = 100000;              // at least 2
  uint32_t variants = 1024;             // per launch, at least 1
  Backend backend = Backend::kAuto;     // auto: the GPU when present; not the reference
  uint64_t seed = 1;                    // of the synthetic graph
  const graph::Graph* graph = nullptr;  // another graph (a trace's, a generated one) when set
  std::string project_gpu = "h200";     // the GPU of the CUDA backend's projection
  uint32_t tile = 0;                    // CPU backend: variants per tile (0: its own choice)
  bool critical_path = true;            // CPU backend: false = finish times only (as sweeps)
  ProgressFn progress;                  // the benchmark's phases done of kBenchmarkPhases
};

// The reference replay, the program's compiling, the warm launch, the timed launches.
constexpr uint64_t kBenchmarkPhases = 4;

struct BatchBenchmark {
  std::string backend;  // the backend that ran
  uint32_t nodes = 0, edges = 0, variants = 0;
  double seconds_per_launch = 0;
  double node_variants_per_s = 0;
  // CUDA backend: the replay kernels alone (CUDA events), without the host's compiling of the
  // program and the tables and the transfers that every launch of `lumos whatif` also pays.
  double kernel_seconds_per_launch = 0;
  double kernel_node_variants_per_s = 0;
  double bytes_per_s = 0;  // state traffic of the replay
  double reference_nodes_per_s = 0;
  double vs_reference = 0;  // node-variants/s over the reference's nodes/s
  // The machine's own memcpy bandwidth (read + write) and the replay's fraction of it; measured
  // for the CPU backend only, 0 otherwise.
  double machine_copy_bytes_per_s = 0;
  double fraction_of_copy_bandwidth = 0;
  // The replay program's registers, and the state a launch keeps in flight (one tile per working
  // thread) against a [node][variant] state of 8-byte finish times (CPU backend).
  uint32_t max_live = 0;
  uint32_t hot_registers = 0;  // the program's working set (replay_program.hpp)
  double compile_s = 0;        // compiling the graph into its program, once (not in the launches)
  double state_bytes = 0;
  double state_fraction = 0;  // state_bytes / (nodes x variants x 8)
  uint32_t tile = 0;          // CPU backend: variants per tile
  bool critical_path = true;  // CPU backend: the path's composition computed too
  // The CUDA backend's projected rate on req.project_gpu (not measured; device_projection.hpp).
  DeviceProjection projection;
};

// Times the reference for at least 0.3 s, the batch (after one warm-up launch) for at least 1 s
// and, on the CPU backend, a 256 MiB memcpy for at least 0.3 s. Throws InputError for a request
// outside the bounds above.
BatchBenchmark run_batch_benchmark(const BatchBenchmarkRequest& req);

}  // namespace lumos::engine
