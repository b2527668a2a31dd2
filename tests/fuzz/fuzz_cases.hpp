// What one fuzz input runs, shared by the libFuzzer targets and the unit tests that replay their
// seed corpora (so a crash input added to a corpus is a regression test in every build). Each
// case returns normally when the input is accepted or rejected with an InputError; anything else
// (crash, sanitizer report, other exception) is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "graph/graph_file.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::fuzz {

// .lgraph bytes. A random change almost never keeps the checksum right, so the fuzzer would only
// ever test the checksum: inputs are resealed (length and checksum recomputed) first, which lets
// mutations reach the section-by-section checks behind it. The unit tests cover the checksum.
inline void graph_file_case(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  graph::reseal_graph_bytes(&bytes);
  try {
    const auto g = graph::read_graph_bytes(bytes, "fuzz.lgraph");
    replay::reference_replay(g);
  } catch (const InputError&) {
  }
}

// Graphs up to this many nodes are built and replayed; larger ones only counted (counting stops
// just past the cap, so its time is bounded too).
constexpr uint64_t kEstimateBuildNodes = 20'000;
constexpr uint64_t kEstimateCountNodes = 200'000;

// 8 control bytes choosing the layout (degrees capped so one run stays well under 50 ms), then
// the text of a TOML model file, written to `toml_path` for model::load_model_toml.
inline void estimate_case(const uint8_t* data, size_t size, const std::string& toml_path) {
  if (size < 8) return;
  FILE* f = std::fopen(toml_path.c_str(), "wb");
  if (!f) return;
  std::fwrite(data + 8, 1, size - 8, f);
  std::fclose(f);
  model::ParallelConfig c;
  c.tp = 1 + data[0] % 16;
  c.cp = 1 + data[1] % 8;
  c.pp = 1 + data[2] % 8;
  c.dp = 1 + data[3] % 16;
  c.mbs = 1 + data[4] % 4;
  c.gbs = c.mbs * c.dp * (1 + data[5] % 16);
  c.interleave = 1 + data[6] % 4;
  const uint8_t flags = data[7];
  c.recompute = static_cast<model::Recompute>((flags & 3) % 3);
  c.sequence_parallel = flags & 4;
  c.distributed_optimizer = flags & 8;
  c.fsdp = flags & 16;
  c.split_counts_embedding = flags & 32;
  const cost::Dtype dtypes[] = {cost::Dtype::kBf16, cost::Dtype::kFp16, cost::Dtype::kFp8,
                                cost::Dtype::kFp32};
  c.dtype = dtypes[flags >> 6];
  try {
    const model::ModelSpec spec = model::load_model_toml(toml_path);
    const auto& db = cost::embedded_db();
    const auto& gpu = db.gpu("h100");
    const auto& topo = db.default_topology_for(gpu);
    c.gpus_per_node = topo.gpus_per_node;
    if (!gpu.peak_tflops[static_cast<size_t>(c.dtype)]) return;  // estimate rejects it first
    const model::Layout layout = model::check_layout(spec, c);
    const model::StepCosts costs = model::price_step(spec, c, layout, db, gpu, topo);
    const uint64_t nodes = model::step_graph_size(spec, c, layout, costs, kEstimateCountNodes);
    if (nodes <= kEstimateBuildNodes) {
      const model::StepGraph sg =
          model::build_step_graph(spec, c, layout, costs, kEstimateBuildNodes);
      if (sg.graph.num_nodes() != nodes) __builtin_trap();  // the count must match the build
      replay::reference_replay(sg.graph);
    }
  } catch (const InputError&) {
  }
}

}  // namespace lumos::fuzz
