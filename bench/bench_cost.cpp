// Cost-model query rate: GEMM, attention and collective estimates per second on one core
// (the sweep engine will ask millions of them).
//   build/bench/bench_cost
#include <benchmark/benchmark.h>

#include "cost/attention_model.hpp"
#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"

namespace {

using namespace lumos::cost;

void BM_GemmQuery(benchmark::State& state) {
  const KernelsDb& db = embedded_db();
  const GpuSpec& gpu = db.gpu("h100");
  int64_t m = 512;
  for (auto _ : state) {
    m = m >= 16384 ? 512 : m + 64;
    benchmark::DoNotOptimize(gemm_time(db, gpu, {m, 12288, 4096, 1, Dtype::kBf16}, false).time_us);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AttentionQuery(benchmark::State& state) {
  const KernelsDb& db = embedded_db();
  const GpuSpec& gpu = db.gpu("h100");
  int64_t s = 512;
  for (auto _ : state) {
    s = s >= 16384 ? 512 : s + 128;
    benchmark::DoNotOptimize(
        attention_time(db, gpu, {2, 32, s, 128, true, false, Dtype::kBf16}).time_us);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_CollectiveQuery(benchmark::State& state) {
  const KernelsDb& db = embedded_db();
  const GpuSpec& gpu = db.gpu("h100");
  const Topology& topo = db.default_topology_for(gpu);
  double bytes = 1024;
  for (auto _ : state) {
    bytes = bytes > 4e9 ? 1024 : bytes * 1.5;
    benchmark::DoNotOptimize(
        collective_time(db, gpu, topo, {Collective::kAllReduce, bytes, 64, 8}).time_us);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_GemmQuery);
BENCHMARK(BM_AttentionQuery);
BENCHMARK(BM_CollectiveQuery);

}  // namespace

BENCHMARK_MAIN();
