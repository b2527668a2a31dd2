#include "trace/classified_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "trace/runtime_names.hpp"

namespace lumos::trace {

using cost::Collective;
using cost::CollectiveQuery;
using cost::Dtype;
using cost::GemmQuery;
using cost::GpuSpec;
using cost::KernelsDb;
using cost::tensor_elem_bytes;

namespace {

Dtype gemm_dtype(std::string_view t) {
  if (t.find("BFloat16") != std::string_view::npos) return Dtype::kBf16;
  if (t.find("Half") != std::string_view::npos) return Dtype::kFp16;
  if (t.find("Float8") != std::string_view::npos) return Dtype::kFp8;
  return Dtype::kFp32;
}

// M, N, K of the operator's GEMM from its input dims, for the common aten GEMM operators.
std::optional<GemmQuery> gemm_from_op(std::string_view op,
                                      const std::vector<std::vector<int64_t>>& d,
                                      const std::vector<std::string_view>& types) {
  auto prod_but_last = [](const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (size_t i = 0; i + 1 < v.size(); ++i) p *= v[i];
    return p;
  };
  GemmQuery q;
  q.dtype = gemm_dtype(types.empty() ? std::string_view() : types[0]);
  // torchao's float8 linear multiplies through aten::_scaled_mm(A[m, k], B[k, n], scales...).
  if ((op == "aten::mm" || op == "aten::matmul" || op == "aten::_scaled_mm") && d.size() >= 2 &&
      d[0].size() == 2 && d[1].size() == 2) {
    q.m = d[0][0], q.k = d[0][1], q.n = d[1][1];
  } else if (op == "aten::addmm" && d.size() >= 3 && d[1].size() == 2 && d[2].size() == 2) {
    q.m = d[1][0], q.k = d[1][1], q.n = d[2][1];
    if (types.size() > 1) q.dtype = gemm_dtype(types[1]);
  } else if (op == "aten::linear" && d.size() >= 2 && d[0].size() >= 2 && d[1].size() == 2) {
    q.m = prod_but_last(d[0]), q.k = d[0].back(), q.n = d[1][0];
  } else if ((op == "aten::bmm" || op == "aten::baddbmm") && d.size() >= 2) {
    const auto& a = op == "aten::bmm" ? d[0] : d[1];
    const auto& b = op == "aten::bmm" ? d[1] : d[2];
    if (a.size() != 3 || b.size() != 3) return std::nullopt;
    q.batch = a[0], q.m = a[1], q.k = a[2], q.n = b[2];
  } else {
    return std::nullopt;
  }
  // An FP8 GEMM whose operands are all E4M3 multiplies activations by weights: a forward GEMM,
  // as the hybrid format (Transformer Engine's recipes, torchao's) keeps gradients in E5M2.
  if (q.dtype == Dtype::kFp8) {
    q.fprop = true;
    for (size_t i = 0; i < types.size() && i < 3; ++i)
      q.fprop = q.fprop && types[i].find("e5m2") == std::string_view::npos;
  }
  if (q.m <= 0 || q.n <= 0 || q.k <= 0 || q.batch <= 0) return std::nullopt;
  // Beyond any real GEMM (and beyond the cost model's integer arithmetic).
  if (q.m > (int64_t{1} << 31) || q.n > (int64_t{1} << 31) || q.k > (int64_t{1} << 31) ||
      q.batch > (int64_t{1} << 24))
    return std::nullopt;
  return q;
}

int64_t numel(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

TraceCostReport cost_report(const KernelsDb& db, const trace::EventTable& t) {
  TraceCostReport rep;
  const GpuSpec* gpu = nullptr;
  if (!t.gpu_name.empty()) {
    try {
      gpu = &db.gpu(t.gpu_name);
      rep.gpu = gpu->name;
    } catch (const InputError&) {
      gpu = nullptr;  // a GPU kernels_db does not describe: classify only
    }
  }
  // Runtime call by correlation, and the innermost CPU operator around each runtime call.
  std::map<int64_t, uint32_t> runtime_by_corr;
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> ops_by_thread;
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.kind == EventKind::kRuntime && e.correlation >= 0)
      runtime_by_corr.emplace(e.correlation, i);
    // PyTorch's "nccl:<collective>" annotation inside the c10d operator gives the tensor size
    // when the kernel has no NCCL args.
    if (e.kind == EventKind::kCpuOp || (e.kind == EventKind::kUserAnnotation && e.shapes >= 0 &&
                                        t.name_of(e).rfind("nccl:", 0) == 0))
      ops_by_thread[{e.pid, e.tid}].push_back(i);
  }
  for (auto& [k, v] : ops_by_thread)
    std::sort(v.begin(), v.end(),
              [&](uint32_t a, uint32_t b) { return t.events[a].ts_ns < t.events[b].ts_ns; });
  auto enclosing_op = [&](const Event& call) -> const Event* {
    auto it = ops_by_thread.find({call.pid, call.tid});
    if (it == ops_by_thread.end()) return nullptr;
    const Event* best = nullptr;
    // Ops that start at or before the call and end after it; the innermost starts last.
    for (uint32_t idx : it->second) {
      const Event& op = t.events[idx];
      if (op.ts_ns > call.ts_ns) break;
      if (op.end_ns() >= call.end_ns()) best = &op;
    }
    return best;
  };
  const int world = std::max(1, t.world_size);
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (!e.is_gpu_op()) continue;
    ClassifiedKernel k;
    k.event = i;
    k.kernel_class = e.kind == EventKind::kMemcpy   ? "memcpy"
                     : e.kind == EventKind::kMemset ? "memset"
                                                    : classify_kernel(db, t.name_of(e));
    const double dur_us = static_cast<double>(e.dur_ns) / 1000.0;
    rep.gpu_time_us += dur_us;
    rep.time_by_class_us[k.kernel_class] += dur_us;
    const Event* op = nullptr;
    if (auto rc = runtime_by_corr.find(e.correlation);
        e.correlation >= 0 && rc != runtime_by_corr.end())
      op = enclosing_op(t.events[rc->second]);
    if (k.kernel_class == "gemm" && op) {
      k.gemm = gemm_from_op(t.name_of(*op), t.input_dims(*op), t.input_types(*op));
      // fp32 inputs on tensor-core kernels run as TF32 (PyTorch's allow_tf32).
      const std::string_view kn = t.name_of(e);
      if (k.gemm && k.gemm->dtype == Dtype::kFp32 &&
          (kn.find("tensorop") != std::string_view::npos ||
           kn.find("1688") != std::string_view::npos || kn.find("tf32") != std::string_view::npos))
        k.gemm->dtype = Dtype::kTf32;
      // A kernel that names an E5M2 operand multiplies a gradient, whatever its operator says.
      if (k.gemm && k.gemm->dtype == Dtype::kFp8 && kn.find("e5m2") != std::string_view::npos)
        k.gemm->fprop = false;
    }
    if (k.kernel_class == "comm" && e.collective >= 0) {
      const trace::CollectiveInfo& ci = t.collectives[e.collective];
      CollectiveQuery q;
      bool known = true;
      switch (ci.type) {
        case trace::CollectiveType::kAllReduce:
          q.op = Collective::kAllReduce;
          break;
        case trace::CollectiveType::kAllGather:
          q.op = Collective::kAllGather;
          break;
        case trace::CollectiveType::kReduceScatter:
          q.op = Collective::kReduceScatter;
          break;
        case trace::CollectiveType::kAllToAll:
        case trace::CollectiveType::kSendRecv:
          q.op = Collective::kAllToAll;
          break;
        case trace::CollectiveType::kBroadcast:
          q.op = Collective::kBroadcast;
          break;
        default:
          known = false;
      }
      q.ranks = ci.group_size > 0 ? ci.group_size : world;
      q.ranks_per_node = std::min(q.ranks, 8);
      // Message size: NCCL args when present, else the record_param_comms operator's input.
      double bytes = -1;
      const int eb = ci.dtype.empty() ? 4 : tensor_elem_bytes(ci.dtype);
      if (ci.in_nelems > 0) {
        const int64_t nel =
            q.op == Collective::kAllGather ? std::max(ci.out_nelems, ci.in_nelems) : ci.in_nelems;
        bytes = static_cast<double>(nel) * eb;
      } else if (op) {
        const auto dims = t.input_dims(*op);
        const auto types = t.input_types(*op);
        if (!dims.empty() && !dims[0].empty())
          bytes = static_cast<double>(numel(dims[0])) *
                  tensor_elem_bytes(types.empty() ? "" : types[0]);
      }
      if (known && bytes > 0 && q.ranks > 1) {
        q.bytes = bytes;
        k.collective = q;
      }
    }
    if (gpu && k.gemm) {
      try {
        const double model = gemm_time(db, *gpu, *k.gemm).time_us;
        if (dur_us > 0) rep.rel_errors["gemm"].push_back(std::fabs(model - dur_us) / dur_us);
      } catch (const InputError&) {
      }
    }
    if (gpu && k.collective) {
      const double model =
          collective_time(db, *gpu, db.default_topology_for(*gpu), *k.collective).time_us;
      if (dur_us > 0) rep.rel_errors["comm"].push_back(std::fabs(model - dur_us) / dur_us);
    }
    rep.kernels.push_back(std::move(k));
  }
  const double other = rep.time_by_class_us.count("other") ? rep.time_by_class_us["other"] : 0.0;
  rep.classified_fraction = rep.gpu_time_us > 0 ? 1.0 - other / rep.gpu_time_us : 1.0;
  return rep;
}

}  // namespace lumos::trace
