// Throughput of the foundation stages on the largest shared trace (or LUMOS_BENCH_TRACE):
// gzip inflate, JSON parse (MB/s of uncompressed JSON, one core), graph build, reference replay
// (nodes/s). Setup is outside the timed loops.
//   build/bench/bench_foundation --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/file_bytes.hpp"
#include "graph/graph_builder.hpp"
#include "graph/multi_rank.hpp"
#include "replay/reference_replay.hpp"
#include "trace/demo_trace.hpp"
#include "trace/kineto_loader.hpp"

namespace {

std::string bench_trace() {
  if (const char* p = std::getenv("LUMOS_BENCH_TRACE")) return p;
  return std::string(LUMOS_TRACE_DIR) + "/hta/negative_queue_length_values_check/rank0.json.gz";
}

const lumos::common::FileBytes& inflated() {
  static const lumos::common::FileBytes fb =
      lumos::common::read_file_bytes(bench_trace(), simdjson::SIMDJSON_PADDING);
  return fb;
}

void BM_Inflate(benchmark::State& state) {
  const std::string path = bench_trace();
  std::string raw;
  {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
      state.SkipWithError("trace not found");
      return;
    }
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) raw.append(buf, n);
    std::fclose(f);
  }
  size_t out = 0;
  for (auto _ : state) {
    auto fb = lumos::common::gunzip_bytes(raw.data(), raw.size(), 64, path);
    out = fb.size;
    benchmark::DoNotOptimize(fb.data.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(out) * state.iterations());
}

void BM_ParseJson(benchmark::State& state) {
  const auto& fb = inflated();
  size_t events = 0;
  for (auto _ : state) {
    auto t = lumos::trace::parse_trace_json(fb.data.data(), fb.size, "bench");
    events = t.events.size();
    benchmark::DoNotOptimize(t.events.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(fb.size) * state.iterations());
  state.counters["events_kept"] = static_cast<double>(events);
}

void BM_BuildGraph(benchmark::State& state) {
  const auto& fb = inflated();
  const auto t = lumos::trace::parse_trace_json(fb.data.data(), fb.size, "bench");
  uint32_t nodes = 0;
  for (auto _ : state) {
    auto b = lumos::graph::build_graph(t);
    nodes = b.graph.num_nodes();
    benchmark::DoNotOptimize(b.graph.pred_index.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(nodes) * state.iterations());
  state.counters["nodes"] = nodes;
}

void BM_ReferenceReplay(benchmark::State& state) {
  const auto& fb = inflated();
  const auto t = lumos::trace::parse_trace_json(fb.data.data(), fb.size, "bench");
  const auto b = lumos::graph::build_graph(t);
  const auto succ = lumos::graph::successors_of(b.graph);
  for (auto _ : state) {
    auto r = lumos::replay::reference_replay(b.graph, succ);
    benchmark::DoNotOptimize(r.finish_us.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(b.graph.num_nodes()) * state.iterations());
  state.counters["nodes"] = b.graph.num_nodes();
  state.counters["edges"] = b.graph.num_edges();
}

// 64 ranks x ~100K events each (the demo training loop, 1,923 steps per rank), joined at their
// collectives: the multi-rank reference replay. Building the graph is setup.
void BM_MultiRankReplay(benchmark::State& state) {
  lumos::trace::DemoOptions o;
  o.steps = 1923;
  const std::string json = lumos::trace::demo_trace_json(o);
  const auto one = lumos::trace::parse_trace_bytes(json.data(), json.size(), "demo");
  std::vector<lumos::trace::EventTable> tables;
  for (int r = 0; r < state.range(0); ++r) {
    tables.push_back(one);
    tables.back().rank = r;
  }
  const auto m = lumos::graph::build_multi_rank(std::move(tables));
  const auto succ = lumos::graph::successors_of(m.graph);
  for (auto _ : state) {
    auto r = lumos::replay::reference_replay(m.graph, succ);
    benchmark::DoNotOptimize(r.finish_us.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(m.graph.num_nodes()) * state.iterations());
  state.counters["nodes"] = m.graph.num_nodes();
  state.counters["events_per_rank"] = static_cast<double>(one.events.size());
}

BENCHMARK(BM_Inflate)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseJson)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildGraph)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceReplay)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MultiRankReplay)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
