#include "estimate/generated_trace.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "common/format.hpp"
#include "common/temp_folder.hpp"
#include "trace/kineto_writer.hpp"

namespace lumos::estimate {

using namespace lumos::model;
namespace {

// Kineto keeps nanoseconds; so do the written times.
double ns(double us) {
  return std::round(us * 1000.0) / 1000.0;
}

// The operator PyTorch records around a GEMM: aten::mm(A[m, k], B[k, n]), or for the batched
// GEMMs of an unfused attention aten::bmm(A[b, m, k], B[b, k, n]).
const char* gemm_operator(const cost::GemmQuery& q) {
  return q.batch > 1 ? "aten::bmm" : "aten::mm";
}

// Its "Input Dims" and "Input type". FP8 in the hybrid format, as Transformer Engine's and
// torchao's recipes run it: activations and weights E4M3, gradients E5M2, so a gradient's GEMM
// (data or weight gradient, the output gradient its first operand) reads one E5M2 operand.
std::vector<std::pair<std::string, trace::ArgValue>> gemm_operator_args(const cost::GemmQuery& q) {
  const std::string type = q.dtype == cost::Dtype::kFp8    ? "c10::Float8_e4m3fn"
                           : q.dtype == cost::Dtype::kFp16 ? "c10::Half"
                                                           : "c10::BFloat16";
  const std::string first = q.dtype == cost::Dtype::kFp8 && !q.fprop ? "c10::Float8_e5m2" : type;
  const auto dims =
      q.batch > 1 ? std::vector<std::vector<int64_t>>{{q.batch, q.m, q.k}, {q.batch, q.k, q.n}}
                  : std::vector<std::vector<int64_t>>{{q.m, q.k}, {q.k, q.n}};
  return {{"Input Dims", dims}, {"Input type", std::vector<std::string>{first, type}}};
}

// Each group's number, the same in every stage's file (the two sides of a pipeline message
// meet by group and sequence number): its position among the job's group names.
std::map<std::string, std::string> group_numbers(const StepGraph& sg) {
  std::map<std::string, std::string> out;
  for (const CommRecord& c : sg.comms) out.emplace(c.process_group, "");
  int next = 0;
  for (auto& [name, number] : out) number = std::to_string(next++);
  return out;
}

}  // namespace

void check_trace_bytes(uint64_t nodes, double max_bytes) {
  // `nodes` may be a count stopped just past the cap: the message says "more", not how much.
  LUMOS_EXPECT(static_cast<double>(nodes) * kTraceBytesPerNode <= max_bytes,
               "lumos generate: --max-output-bytes " +
                   common::describe_bytes(static_cast<uint64_t>(max_bytes)) +
                   ": the traces would take more (over " + std::to_string(nodes - 1) +
                   " kernels and calls, about " + strprintf("%.0f", kTraceBytesPerNode) +
                   " bytes each); raise it, or give fewer micro-batches or layers");
}

std::string stage_trace_json(const StepGraph& sg, const replay::ReplayResult& r, int stage,
                             const std::string& gpu_name, const StageTraceOptions& opt) {
  const std::map<std::string, std::string> numbers =
      opt.numbered_groups ? group_numbers(sg) : std::map<std::string, std::string>{};
  const graph::Graph& g = sg.graph;
  trace::KinetoWriter w;
  w.set_rank(sg.stage_rank[static_cast<size_t>(stage)], sg.world_size);
  // One GPU per stage stands for the stage's data/tensor/context-parallel peers, which run the
  // same kernels: the folder is complete with these ranks (`lumos replay DIR` checks it).
  w.set_traced_ranks(std::vector<int>(sg.stage_rank.begin(), sg.stage_rank.end()));
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
                  {"Process Group Name",
                   opt.numbered_groups ? numbers.at(c.process_group) : c.process_group},
                  {"Seq", c.seq}};
          if (opt.numbered_groups)
            args.emplace_back("Process Group Description", std::string("undefined"));
        }
        // A GEMM's launch sits inside its operator with the shapes PyTorch records, so that
        // the trace can be repriced for other GPUs like a profiled one.
        if (sg.meta_of(k).gemm >= 0) {
          const cost::GemmQuery& q = sg.gemms[static_cast<size_t>(sg.meta_of(k).gemm)];
          w.cpu_op(kThreadId, gemm_operator(q), cts, cend - cts, gemm_operator_args(q));
        }
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
                                            const std::string& out, const std::string& gpu_name,
                                            const StageTraceOptions& opt) {
  namespace fs = std::filesystem;
  LUMOS_EXPECT(!out.empty(), "output folder: empty name");
  // "a/b/" names the folder b: without the trailing separator, parent and name are a and b.
  fs::path target = fs::path(out).lexically_normal();
  if (!target.has_filename() && target.has_parent_path()) target = target.parent_path();
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st)) {
    LUMOS_EXPECT(fs::is_directory(st), out + ": exists and is not a folder");
    // Refused rather than replaced: the folder may hold other work (or be `-o ~`), and a rename
    // cannot swap a full folder atomically.
    LUMOS_EXPECT(fs::is_empty(target, ec) && !ec,
                 out + ": the folder exists and is not empty (remove it or choose another)");
  } else {
    LUMOS_EXPECT(!fs::is_symlink(fs::symlink_status(target, ec)),
                 out + ": a link to a missing folder");
  }
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  LUMOS_EXPECT(!ec && fs::is_directory(parent),
               out + ": cannot create the folder " + parent.string() + " (" + ec.message() + ")");
  // Written beside the target and renamed into place when every stage is written: a failure
  // part-way (a full disk at stage 2) leaves no folder that replays as a smaller job.
  std::string tmp_prefix = target.filename().string();
  tmp_prefix.insert(0, 1, '.');  // hidden (appended, not `"." + name`: GCC 12 warns falsely there)
  tmp_prefix += ".tmp.";
  // The folders of writers that were killed (SIGKILL leaves no chance to clean up) go first.
  remove_stale_temporaries(parent.string(), tmp_prefix);
  const std::string pid = std::to_string(::getpid());
  const fs::path tmp = parent / (tmp_prefix + pid);
  fs::remove_all(tmp, ec);
  LUMOS_EXPECT(fs::create_directory(tmp, ec) && !ec,
               out + ": cannot create a temporary folder beside it (" + ec.message() + ")");
  std::vector<std::string> names, tmp_files;
  const int digits = sg.stages > 1000 ? 4 : sg.stages > 100 ? 3 : sg.stages > 10 ? 2 : 1;
  for (int s = 0; s < sg.stages; ++s) {
    std::string idx = std::to_string(s);
    idx.insert(0, static_cast<size_t>(std::max(0, digits - static_cast<int>(idx.size()))), '0');
    names.push_back("stage" + idx + ".rank" +
                    std::to_string(sg.stage_rank[static_cast<size_t>(s)]) + ".json");
    // Each file and the temporary write_file_atomically writes it through.
    tmp_files.push_back((tmp / names.back()).string());
    tmp_files.push_back(tmp_files.back() + ".tmp." + pid);
  }
  // Stopped by SIGINT or SIGTERM (Ctrl-C, a scheduler's time limit), no hidden folder is left.
  const RemoveOnInterrupt cleanup(tmp.string(), tmp_files);
  std::vector<std::string> paths;
  try {
    for (int s = 0; s < sg.stages; ++s) {
      const std::string& name = names[static_cast<size_t>(s)];
      const std::string text = stage_trace_json(sg, r, s, gpu_name, opt);
      write_file_atomically((tmp / name).string(), [&](std::ostream& os) { os << text; });
      paths.push_back((target / name).string());
      if (opt.progress) opt.progress(paths.size(), names.size());
    }
    // rename(2) replaces an empty folder; a folder filled meanwhile makes it fail.
    fs::rename(tmp, target, ec);
    LUMOS_EXPECT(!ec, out + ": cannot move the written traces into place (" + ec.message() + ")");
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return paths;
}

}  // namespace lumos::estimate
