#include "estimate/generated_trace.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "trace/kineto_writer.hpp"

namespace lumos::estimate {

using namespace lumos::model;
namespace {

// Kineto keeps nanoseconds; so do the written times.
double ns(double us) {
  return std::round(us * 1000.0) / 1000.0;
}

// "Input Dims" and "Input type" of aten::mm(A[m, k], B[k, n]) (batch 1: the generated
// iteration's GEMMs are plain matrix products).
std::vector<std::pair<std::string, trace::ArgValue>> gemm_operator_args(const cost::GemmQuery& q) {
  const std::string type = q.dtype == cost::Dtype::kFp8    ? "c10::Float8_e4m3fn"
                           : q.dtype == cost::Dtype::kFp16 ? "c10::Half"
                                                           : "c10::BFloat16";
  return {{"Input Dims", std::vector<std::vector<int64_t>>{{q.m, q.k}, {q.k, q.n}}},
          {"Input type", std::vector<std::string>{type, type}}};
}

}  // namespace

std::string stage_trace_json(const StepGraph& sg, const replay::ReplayResult& r, int stage,
                             const std::string& gpu_name) {
  const graph::Graph& g = sg.graph;
  trace::KinetoWriter w;
  w.set_rank(sg.stage_rank[static_cast<size_t>(stage)], sg.world_size);
  w.set_base_time_ns(int64_t{1700000000} * 1000000000);
  w.set_device_name(gpu_name);
  const int64_t device = sg.stage_rank[static_cast<size_t>(stage)] % std::max(1, sg.gpus_per_node);
  std::vector<graph::NodeId> cpu;
  // Call -> the GPU nodes it launched, by (launch lag, node): a run of n launches shares one CPU
  // node and the k-th has the k-th smallest lag.
  std::unordered_map<graph::NodeId, std::vector<std::pair<double, graph::NodeId>>> launched;
  std::unordered_map<graph::NodeId, graph::NodeId> transfer_of;  // p2p arrival -> transfer

  for (graph::NodeId n = 1; n < g.num_nodes(); ++n) {
    if (sg.meta_of(n).stage != stage) continue;
    if (g.kind[n] == graph::NodeKind::kRuntime) cpu.push_back(n);
    bool met = false;
    graph::NodeId same_stream = graph::kOrigin;
    for (uint32_t k = g.pred_offset[n]; k < g.pred_offset[n + 1]; ++k) {
      const graph::NodeId p = g.pred_index[k];
      switch (g.pred_kind[k]) {
        case graph::EdgeKind::kLaunch:
          launched[p].push_back({g.pred_lag_us[k], n});
          break;
        case graph::EdgeKind::kCrossRank:
          met = true;
          break;
        case graph::EdgeKind::kIntraStream:
          same_stream = p;
          break;
        default:
          break;
      }
    }
    if (met && same_stream != graph::kOrigin) transfer_of[same_stream] = n;
  }
  std::unordered_map<uint32_t, int64_t> corr_of;  // by build index (record calls)
  double prev_end = 0, end = 0;
  for (graph::NodeId n : cpu) {
    const std::string& name = g.names[g.name[n]];
    double ts = ns(r.start_us[n]), dur = ns(r.finish_us[n]) - ts;
    if (sg.meta_of(n).sync) {  // the call began when the thread reached it
      ts = prev_end;
      dur = ns(r.finish_us[n]) - ts;
      const int64_t corr = w.runtime(kThreadId, name, ts, dur);
      w.sync("Stream Sync", corr, device, kStreamIds[kComputeStream], ts, dur);
    } else if (auto it = launched.find(n); it != launched.end()) {
      auto& kernels = it->second;
      std::sort(kernels.begin(), kernels.end());
      const double each = (r.finish_us[n] - r.start_us[n]) / static_cast<double>(kernels.size());
      for (size_t i = 0; i < kernels.size(); ++i) {
        const graph::NodeId k = kernels[i].second;
        const auto t = transfer_of.find(k);
        const graph::NodeId last = t != transfer_of.end() ? t->second : k;
        const double gts = ns(r.start_us[k]);
        const double cts = ns(r.start_us[n] + static_cast<double>(i) * each);
        const double cend = ns(r.start_us[n] + static_cast<double>(i + 1) * each);
        std::vector<std::pair<std::string, trace::ArgValue>> args;
        if (sg.meta_of(k).comm >= 0) {
          const CommRecord& c = sg.comms[static_cast<size_t>(sg.meta_of(k).comm)];
          args = {{"Collective name", c.collective},
                  {"dtype", c.dtype},
                  {"In msg nelems", c.in_nelems},
                  {"Out msg nelems", c.out_nelems},
                  {"Group size", c.group_size},
                  {"Process Group Name", c.process_group},
                  {"Seq", c.seq}};
        }
        // A GEMM's launch sits inside its operator with the shapes PyTorch records, so that
        // the trace can be repriced for other GPUs like a profiled one.
        if (sg.meta_of(k).gemm >= 0)
          w.cpu_op(kThreadId, "aten::mm", cts, cend - cts,
                   gemm_operator_args(sg.gemms[static_cast<size_t>(sg.meta_of(k).gemm)]));
        w.launch(kThreadId, name, cts, cend - cts, "kernel", g.names[g.name[k]], device,
                 kStreamIds[sg.meta_of(k).stream], gts, ns(r.finish_us[last]) - gts,
                 std::move(args));
      }
    } else if (sg.meta_of(n).waits_on) {
      const int from = sg.meta_of(n).waits_on & 0xf, to = (sg.meta_of(n).waits_on >> 4) & 0xf;
      const int64_t corr = w.runtime(kThreadId, name, ts, dur);
      w.sync("Stream Wait Event", corr, device, kStreamIds[to], ts, dur, kStreamIds[from],
             corr_of.at(sg.meta_of(n).record));
    } else {
      corr_of[sg.build_index[n]] = w.runtime(kThreadId, name, ts, dur);
    }
    prev_end = ts + dur;
    end = std::max(end, prev_end);
  }
  w.annotation(kThreadId, "ProfilerStep#1", 0, end);
  return w.json();
}

std::vector<std::string> write_stage_traces(const StepGraph& sg, const replay::ReplayResult& r,
                                            const std::string& out, const std::string& gpu_name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(out, ec);
  LUMOS_EXPECT(!ec && fs::is_directory(out),
               out + ": cannot create the output folder (" + ec.message() + ")");
  std::vector<std::string> paths;
  const int digits = sg.stages > 1000 ? 4 : sg.stages > 100 ? 3 : sg.stages > 10 ? 2 : 1;
  for (int s = 0; s < sg.stages; ++s) {
    std::string idx = std::to_string(s);
    idx.insert(0, static_cast<size_t>(std::max(0, digits - static_cast<int>(idx.size()))), '0');
    const std::string path =
        (fs::path(out) / ("stage" + idx + ".rank" +
                          std::to_string(sg.stage_rank[static_cast<size_t>(s)]) + ".json"))
            .string();
    const std::string text = stage_trace_json(sg, r, s, gpu_name);
    write_file_atomically(path, [&](std::ostream& os) { os << text; });
    paths.push_back(path);
  }
  return paths;
}

}  // namespace lumos::estimate
