#include "whatif/job_structure.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/dtype.hpp"
#include "cost/kernel_classifier.hpp"
#include "graph/graph_builder.hpp"
#include "whatif/group_roles.hpp"

namespace lumos::whatif {

using trace::CollectiveType;
using trace::EventKind;

const char* to_string(GroupRole r) {
  switch (r) {
    case GroupRole::kTp:
      return "tensor parallel";
    case GroupRole::kCp:
      return "context parallel";
    case GroupRole::kDp:
      return "data parallel";
    case GroupRole::kPp:
      return "pipeline parallel";
    case GroupRole::kEmbedding:
      return "tied embedding";
    case GroupRole::kAllToAll:
      return "all-to-all (experts or sharded embeddings)";
    case GroupRole::kUnknown:
      break;
  }
  return "unknown";
}

const ProcessGroup* JobStructure::group_with(GroupRole r) const {
  for (const auto& g : groups)
    if (g.role == r) return &g;
  return nullptr;
}

int JobStructure::ranks_per_stage() const {
  const int t = std::max(1, tp), c = std::max(1, cp), d = std::max(1, dp);
  return t * (d % c == 0 ? d : d * c);
}

RepeatPattern find_repeats(const std::vector<uint32_t>& seq, uint32_t max_period) {
  // Fewer kernels than a norm, a GEMM and an activation are not a layer: a data and a weight
  // gradient GEMM back to back repeat too.
  constexpr uint32_t kMinLayerKernels = 3;
  const size_t n = seq.size();
  const uint32_t top = static_cast<uint32_t>(std::min<size_t>(max_period, n / 2));
  // Coverage of period p: kernels inside stretches that repeat a p-block at least twice.
  auto coverage = [&](uint32_t p, std::vector<std::pair<size_t, size_t>>* runs) {
    size_t cov = 0;
    for (size_t i = 0; i + p < n;) {
      if (seq[i] != seq[i + p]) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j + p < n && seq[j] == seq[j + p]) ++j;
      if (j - i >= p) {
        cov += j - i + p;
        if (runs) runs->emplace_back(i, j + p);
      }
      i = j;
    }
    return cov;
  };
  std::vector<size_t> cov(top + 1, 0);
  size_t best = 0;
  for (uint32_t p = kMinLayerKernels; p <= top; ++p)
    best = std::max(best, cov[p] = coverage(p, nullptr));
  RepeatPattern out;
  if (best == 0 || best < n / 5) return out;  // nothing repeats, or too little to be the layers
  // Repeats nest: the steady state of a pipeline schedule repeats whole micro-batches, whose
  // passes repeat layers. The layer is the shortest block that still covers a good part of the
  // sequence (a block of two layers, or of a forward and a backward pass, covers no more; a
  // forward pass of fewer kernels than the backward still covers more than a third as much).
  const size_t enough = std::max<size_t>((best + 2) / 3, n / 5);
  // A block made of copies of a shorter one (k k k k) is that shorter block repeating.
  auto primitive = [&](size_t begin, uint32_t p) {
    for (uint32_t q = 1; q < p; ++q) {
      if (p % q) continue;
      bool copies = true;
      for (uint32_t i = 0; i + q < p && copies; ++i) copies = seq[begin + i] == seq[begin + i + q];
      if (copies) return false;
    }
    return true;
  };
  std::vector<std::pair<size_t, size_t>> runs;
  uint32_t period = kMinLayerKernels;
  for (; period <= top; ++period) {
    if (cov[period] < enough) continue;
    runs.clear();
    coverage(period, &runs);
    if (primitive(runs.front().first, period)) break;
  }
  if (period > top) return out;
  out.period = period;
  out.runs = static_cast<uint32_t>(runs.size());
  out.first_kernel = static_cast<uint32_t>(runs.front().first);
  out.first_repeats = static_cast<uint32_t>((runs.front().second - runs.front().first) / period);
  for (const auto& [b, e] : runs) {
    out.repeats = std::max(out.repeats, static_cast<uint32_t>((e - b) / period));
    out.instances += static_cast<uint32_t>((e - b) / period);
    out.stretches.emplace_back(static_cast<uint32_t>(b), static_cast<uint32_t>(e));
  }
  return out;
}

namespace {

// Pipeline messages. Not SendRecv: NCCL runs all-to-all as grouped send/receive kernels too.
bool is_p2p(CollectiveType t) {
  return t == CollectiveType::kSend || t == CollectiveType::kRecv;
}

std::string shape_of(const cost::GemmQuery& q) {
  std::string s = strprintf("%lld x %lld x %lld", static_cast<long long>(q.m),
                            static_cast<long long>(q.n), static_cast<long long>(q.k));
  if (q.batch > 1) s += strprintf(" (batch %lld)", static_cast<long long>(q.batch));
  return s + " " + cost::to_string(q.dtype);
}

struct RankScan {
  std::map<std::string, ProcessGroup> groups;
  std::set<std::pair<std::string, int64_t>> group_streams;  // (group, stream)
  std::set<int64_t> gemm_streams;
  bool backward = false;  // a sign of a backward pass or an optimizer step on some rank
};

void add_unique(std::vector<int64_t>& v, int64_t x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// One dense message of a group: an activation of the rank's GEMMs, or another size.
void count_message(ProcessGroup& g, int64_t elements, const std::vector<int64_t>& tokens,
                   const std::vector<int64_t>& dims) {
  std::string shape;
  if (activation_sized(elements, tokens, dims, &shape)) {
    if (g.activation_sized++ == 0) g.activation_shape = shape;
  } else if (elements > 0) {
    ++g.other_sized;
    g.small_sized += elements < ProcessGroup::kSmallMessageElements;
  }
}

// All-reduces outside NCCL: PyTorch's symmetric-memory kernels (multimem, one-shot, two-shot)
// and vLLM's custom all-reduce, which carry no NCCL args. Their messages are sized by the
// operator that launched them (same External id); their group is the world (vLLM runs them over
// its tensor-parallel group, the only one of that size in a single-node inference job).
void scan_symmetric_memory(const trace::EventTable& t, int32_t rank,
                           const trace::TraceCostReport& rep, const std::vector<int64_t>& tokens,
                           const std::vector<int64_t>& dims, RankScan& scan) {
  auto all_reduce_kernel = [](std::string_view n) {
    return n.find("all_reduce") != std::string_view::npos ||
           n.find("cross_device_reduce") != std::string_view::npos;
  };
  std::unordered_map<int64_t, const trace::Event*> op_of;  // External id -> its all-reduce op
  for (const trace::Event& e : t.events)
    if (e.kind == EventKind::kCpuOp && e.external_id >= 0 && e.shapes >= 0 &&
        t.name_of(e).find("all_reduce") != std::string_view::npos)
      op_of[e.external_id] = &e;
  const std::string name = "(symmetric memory)";
  for (const auto& k : rep.kernels) {
    const trace::Event& e = t.events[k.event];
    if (k.kernel_class == "comm" || e.kind != EventKind::kKernel ||
        !all_reduce_kernel(t.name_of(e)))
      continue;
    ProcessGroup& g = scan.groups[name];
    g.name = name;
    if (g.size < 0 && t.world_size > 0)
      g.size = t.world_size, g.size_from = "distributedInfo world size (no NCCL group args)";
    GroupOps& ops = g.ops[CollectiveType::kAllReduce];
    ++ops.kernels;
    ops.traced_us += static_cast<double>(e.dur_ns) / 1000.0;
    const auto it = e.external_id >= 0 ? op_of.find(e.external_id) : op_of.end();
    if (it != op_of.end()) {
      const auto in = t.input_dims(*it->second);
      const auto types = t.input_types(*it->second);
      int64_t elements = in.empty() || in[0].empty() ? 0 : 1;
      if (elements)
        for (int64_t d : in[0]) elements *= d;
      ops.bytes += static_cast<double>(elements) *
                   (types.empty() ? 2 : std::max(1, cost::tensor_elem_bytes(types[0])));
      count_message(g, elements, tokens, dims);
    }
    if (std::find(g.ranks.begin(), g.ranks.end(), rank) == g.ranks.end()) g.ranks.push_back(rank);
    scan.group_streams.emplace(name, e.stream);
  }
}

// Groups and streams of one rank's collectives.
void scan_rank(const trace::EventTable& t, int32_t rank, const trace::TraceCostReport& rep,
               RankScan& scan) {
  // A backward pass shows in autograd's operators (ConvolutionBackward0, autograd::engine) or
  // in its kernels' names (flash_bwd, cuDNN's dgrad and wgrad engines).
  for (const std::string& n : t.names)
    for (const char* part : {"Backward", "backward", "autograd::engine", "bwd", "dgrad", "wgrad"})
      scan.backward |= n.find(part) != std::string::npos;
  // The rank's GEMMs: the tokens they multiply (the rows most of them have: forward and data
  // gradient GEMMs; a weight gradient's rows are its output features) and their other
  // dimensions, which an activation message is the product of.
  std::vector<int64_t> tokens, dims;
  std::map<int64_t, uint32_t> rows;
  for (const auto& k : rep.kernels) {
    scan.backward |= k.kernel_class == "attention_bwd" || k.kernel_class == "optimizer";
    if (!k.gemm || k.gemm->batch != 1) continue;
    ++rows[k.gemm->m];
    add_unique(dims, k.gemm->n), add_unique(dims, k.gemm->k);
  }
  if (!rows.empty())
    tokens.push_back(std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                       return a.second < b.second;
                     })->first);
  for (const auto& k : rep.kernels) {
    const trace::Event& e = t.events[k.event];
    if (k.kernel_class == "gemm") scan.gemm_streams.insert(e.stream);
    if (k.kernel_class != "comm") continue;
    const trace::CollectiveInfo* ci = e.collective >= 0 ? &t.collectives[e.collective] : nullptr;
    const std::string name =
        ci && !ci->process_group.empty() ? ci->process_group : std::string("(unnamed)");
    ProcessGroup& g = scan.groups[name];
    g.name = name;
    if (ci && !ci->process_group_desc.empty()) g.desc = ci->process_group_desc;
    if (ci && ci->group_size > 0) {
      g.size = ci->group_size, g.size_from = "NCCL args";
    } else if (g.size < 0 && ci && is_p2p(ci->type)) {
      g.size = 2, g.size_from = "a send or receive is between two ranks";
    } else if (g.size < 0 && t.world_size > 0 && !(ci && is_p2p(ci->type))) {
      g.size = t.world_size, g.size_from = "distributedInfo world size (no NCCL group args)";
    }
    GroupOps& ops = g.ops[ci ? ci->type : CollectiveType::kOther];
    ++ops.kernels;
    ops.traced_us += static_cast<double>(e.dur_ns) / 1000.0;
    if (k.collective) ops.bytes += k.collective->bytes;
    // The whole tensor: what an all-reduce reduces, a reduce-scatter's input, a gather's output.
    const int64_t elements = ci ? std::max(ci->in_nelems, ci->out_nelems) : -1;
    const bool dense = ci && (ci->type == CollectiveType::kAllReduce ||
                              ci->type == CollectiveType::kReduceScatter ||
                              ci->type == CollectiveType::kAllGather);
    if (dense) count_message(g, elements, tokens, dims);
    if (std::find(g.ranks.begin(), g.ranks.end(), rank) == g.ranks.end()) g.ranks.push_back(rank);
    scan.group_streams.emplace(name, e.stream);
  }
  scan_symmetric_memory(t, rank, rep, tokens, dims, scan);
  // What distributedInfo.pg_config says of the groups whose kernels do not say it.
  for (auto& [name, g] : scan.groups)
    for (const auto& pg : t.pg_config) {
      if (pg.name != name) continue;
      if ((g.desc.empty() || g.desc == "undefined") && pg.desc != "undefined") g.desc = pg.desc;
      if (pg.size > 0 && g.size_from != "NCCL args")
        g.size = pg.size, g.size_from = "distributedInfo pg_config";
    }
}

// Whether a GPU op belongs to the first ProfilerStep: launched within its window (a kernel may
// run after the next step's CPU work began). Every op when the trace has no steps.
class StepWindow {
 public:
  explicit StepWindow(const trace::EventTable& t) {
    const auto steps = graph::find_steps(t);
    if (steps.empty()) return;
    begin_ = steps[0].begin_ns, end_ = steps[0].end_ns;
    for (const trace::Event& e : t.events)
      if (e.kind == EventKind::kRuntime && e.correlation >= 0)
        launch_ns_.emplace(e.correlation, e.ts_ns);
  }
  bool operator()(const trace::Event& e) const {
    auto it = e.correlation >= 0 ? launch_ns_.find(e.correlation) : launch_ns_.end();
    const int64_t at = it == launch_ns_.end() ? e.ts_ns : it->second;
    return at >= begin_ && at < end_;
  }

 private:
  int64_t begin_ = INT64_MIN, end_ = INT64_MAX;
  std::unordered_map<int64_t, int64_t> launch_ns_;
};

// The compute stream's kernel names (as ids) in the first step of the rank, and their events.
std::vector<uint32_t> compute_sequence(const trace::EventTable& t, const StepWindow& in_step,
                                       const trace::TraceCostReport& rep,
                                       std::vector<const trace::ClassifiedKernel*>* kernels) {
  std::map<int64_t, double> busy_by_stream;  // the stream with the most non-collective time
  for (const auto& k : rep.kernels) {
    const trace::Event& e = t.events[k.event];
    if (e.kind == EventKind::kKernel && k.kernel_class != "comm" && in_step(e))
      busy_by_stream[e.stream] += static_cast<double>(e.dur_ns);
  }
  if (busy_by_stream.empty()) return {};
  const int64_t stream =
      std::max_element(busy_by_stream.begin(), busy_by_stream.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; })
          ->first;
  for (const auto& k : rep.kernels) {
    const trace::Event& e = t.events[k.event];
    if (e.kind == EventKind::kKernel && k.kernel_class != "comm" && e.stream == stream &&
        in_step(e))
      kernels->push_back(&k);
  }
  std::stable_sort(kernels->begin(), kernels->end(), [&](const auto* a, const auto* b) {
    return t.events[a->event].ts_ns < t.events[b->event].ts_ns;
  });
  std::vector<uint32_t> seq;
  for (const auto* k : *kernels) seq.push_back(t.events[k->event].name);
  return seq;
}

void describe_layer(const trace::EventTable& t,
                    const std::vector<const trace::ClassifiedKernel*>& kernels, RepeatPattern& p) {
  for (uint32_t i = p.first_kernel; i < p.first_kernel + p.period && i < kernels.size(); ++i) {
    const trace::ClassifiedKernel& k = *kernels[i];
    const trace::Event& e = t.events[k.event];
    p.kernels.push_back({std::string(t.name_of(e)), k.kernel_class,
                         static_cast<double>(e.dur_ns) / 1000.0, k.gemm ? shape_of(*k.gemm) : "",
                         k.gemm});
  }
}

}  // namespace

const trace::EventTable* TracedKernels::table_of_rank(int32_t rank, size_t* index) const {
  for (size_t i = 0; i < tables.size(); ++i)
    if (tables.size() == 1 || ranks[i] == rank) {
      *index = i;
      return tables[i];
    }
  return nullptr;
}

TracedKernels classify_traced(const std::vector<const trace::EventTable*>& tables,
                              const cost::KernelsDb& db) {
  TracedKernels tk;
  tk.tables = tables;
  for (const trace::EventTable* t : tables) tk.reports.push_back(trace::cost_report(db, *t));
  for (size_t i = 0; i < tables.size(); ++i)
    tk.ranks.push_back(tables[i]->rank >= 0 ? tables[i]->rank : static_cast<int32_t>(i));
  tk.by_event.resize(tables.size());
  for (size_t i = 0; i < tables.size(); ++i)
    for (const auto& k : tk.reports[i].kernels)
      tk.by_event[i].emplace(tables[i]->events[k.event].index, &k);
  return tk;
}

const trace::ClassifiedKernel* TracedKernels::kernel_of(const graph::Graph& g, graph::NodeId v,
                                                        size_t* table) const {
  if (g.event[v] < 0 || g.resource[v] == graph::kNoResource) return nullptr;
  if (!table_of_rank(g.resources[g.resource[v]].rank, table)) return nullptr;
  auto it = by_event[*table].find(g.event[v]);
  return it == by_event[*table].end() ? nullptr : it->second;
}

JobStructure recognise_job(const TracedKernels& tk) {
  return recognise_job(tk, JobHints{});
}

JobStructure recognise_job(const TracedKernels& tk, const JobHints& hints) {
  JobStructure js;
  LUMOS_EXPECT(!tk.tables.empty(), "lumos whatif: no trace to recognise a job in");
  RankScan scan;
  const auto& tables = tk.tables;
  const auto& reports = tk.reports;
  size_t fi = 0;  // the lowest rank: its layers are described
  for (size_t i = 0; i < tables.size(); ++i) {
    scan_rank(*tables[i], tk.ranks[i], reports[i], scan);
    js.world_size = std::max(js.world_size, tables[i]->world_size);
    js.traced_ranks.push_back(tk.ranks[i]);
    if (tk.ranks[i] < tk.ranks[fi]) fi = i;
  }
  std::sort(js.traced_ranks.begin(), js.traced_ranks.end());
  const trace::EventTable* first = tables[fi];
  js.described_rank = tk.ranks[fi];
  // The layer pattern of the lowest traced rank.
  std::vector<const trace::ClassifiedKernel*> kernels;
  const StepWindow in_step(*first);
  std::vector<uint32_t> seq = compute_sequence(*first, in_step, reports[fi], &kernels);
  js.compute_kernels = static_cast<uint32_t>(seq.size());
  RepeatPattern a = find_repeats(seq);
  // A second pattern among what the first did not cover: the other pass.
  RepeatPattern b;
  if (a.period > 0) {
    std::vector<uint32_t> rest = seq;  // the first pattern's stretches masked out
    for (const auto& [from, to] : a.stretches)
      for (uint32_t x = from; x < to; ++x) rest[x] = 0x80000000u + x;
    b = find_repeats(rest);
  }
  if (b.period > 0 && b.first_kernel < a.first_kernel) std::swap(a, b);
  js.forward = a, js.backward = b;
  describe_layer(*first, kernels, js.forward);
  describe_layer(*first, kernels, js.backward);
  // Groups that reduce inside the first stretch of a pattern. Tensor parallelism reduces in the
  // forward and the backward pass; gradient reduction only in the backward (and the pass
  // labelled forward may be the backward when the forward does not repeat): both are needed.
  auto reducing_in = [&](const RepeatPattern& p) {
    std::set<std::string> out;
    if (p.period == 0) return out;
    const trace::Event& from = first->events[kernels[p.stretches.front().first]->event];
    const trace::Event& to = first->events[kernels[p.stretches.front().second - 1]->event];
    for (const auto& k : reports[fi].kernels) {
      const trace::Event& e = first->events[k.event];
      if (k.kernel_class != "comm" || e.collective < 0 || e.ts_ns < from.ts_ns ||
          e.ts_ns > to.end_ns())
        continue;
      const trace::CollectiveInfo& ci = first->collectives[e.collective];
      if (ci.type == CollectiveType::kAllReduce || ci.type == CollectiveType::kReduceScatter ||
          ci.type == CollectiveType::kAllGather)
        out.insert(ci.process_group.empty() ? "(unnamed)" : ci.process_group);
    }
    return out;
  };
  const std::set<std::string> in_fwd = reducing_in(js.forward), in_bwd = reducing_in(js.backward);
  js.forward_only = !scan.backward && js.backward.period == 0;
  for (auto& [name, g] : scan.groups) {
    if (g.size < 0) g.size_from = "unknown";
    GroupFacts facts;
    for (const auto& [group, stream] : scan.group_streams)
      facts.on_gemm_stream |= group == name && scan.gemm_streams.count(stream) > 0;
    facts.in_passes = in_fwd.count(name) > 0 && in_bwd.count(name) > 0;
    facts.forward_only = js.forward_only;
    for (const auto& [other, og] : scan.groups)
      facts.pipeline |= og.ops.count(CollectiveType::kSend) || og.ops.count(CollectiveType::kRecv);
    assign_role(g, facts, &js.disagreements);
    js.groups.push_back(g);
  }
  override_roles(js, hints.groups);
  degrees_from_groups(js);
  apply_traced_degrees(js, hints.traced);
  check_world(js, hints);
  // Pipeline messages of the described rank's first step.
  for (const auto& k : reports[fi].kernels) {
    const trace::Event& e = first->events[k.event];
    if (k.kernel_class != "comm" || e.collective < 0 || !in_step(e)) continue;
    const trace::CollectiveInfo& ci = first->collectives[e.collective];
    const std::string name = ci.process_group.empty() ? "(unnamed)" : ci.process_group;
    const bool pp_group = scan.groups.count(name) && [&] {
      for (const auto& g : js.groups)
        if (g.name == name) return g.role == GroupRole::kPp;
      return false;
    }();
    if (is_p2p(ci.type) || (ci.type == CollectiveType::kSendRecv && pp_group)) ++js.p2p_kernels;
  }
  if (js.forward.period == 0)
    js.missing.push_back("layers: no block of kernels repeats on the compute stream");
  else if (js.forward_only)
    js.missing.push_back("backward layers: none, the job runs forward passes only");
  else if (js.backward.period == 0)
    js.missing.push_back("backward layers: only one repeating block of kernels was found");
  if (js.groups.empty()) js.missing.push_back("process groups: the trace runs no collective");
  if (js.world_size < 0) js.missing.push_back("world size: the trace has no distributedInfo");
  if (!js.groups.empty() && !js.group_with(GroupRole::kDp) && js.dp_from.empty())
    js.missing.push_back("data-parallel group: no group reduces gradients");
  for (const auto& g : js.groups)
    if (g.size < 0) js.missing.push_back("size of group " + g.name + ": no NCCL group args");
  if (js.pp < 0) js.missing.push_back("pipeline stages: " + js.pp_from);
  const int64_t ranks = int64_t{js.ranks_per_stage()} * js.pp;
  if (js.world_size > 0 && js.pp > 0 && ranks != js.world_size)
    js.missing.push_back(strprintf(
        "layout: the groups found make %lld of the world's %d ranks (--traced gives the degrees)",
        static_cast<long long>(ranks), js.world_size));
  return js;
}

}  // namespace lumos::whatif
