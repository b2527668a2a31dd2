#include "whatif/shape_reprice.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/format.hpp"
#include "cost/kernel_classifier.hpp"
#include "model/step_costs.hpp"
#include "whatif/peer_waits.hpp"

namespace lumos::whatif {

namespace {

using Shape = std::tuple<int64_t, int64_t, int64_t, int64_t>;

model::StepCosts price(const model::ModelSpec& m, const model::ParallelConfig& c,
                       const ShapeRepriceRequest& r, const cost::KernelsDb& db) {
  return model::price_step(m, c, model::check_layout(m, c), db, *r.gpu, *r.topology);
}

std::vector<const std::vector<model::KernelOp>*> op_lists(const model::StepCosts& s) {
  return {&s.layer_fwd, &s.layer_bwd, &s.layer_recompute, &s.embed_fwd,
          &s.embed_bwd, &s.head_fwd,  &s.head_bwd};
}

// A ratio per key, dropped when two kernels of one key scale differently (an ambiguous key).
struct Ratios {
  std::map<std::string, double> by_name;
  // A shape that two kernels share (a forward GEMM and a data gradient): their summed time.
  std::map<Shape, std::pair<double, double>> by_shape;
  std::map<std::string, std::pair<double, double>> by_class;  // new, traced time
  std::map<model::CommGroup, std::pair<double, double>> by_group;
  std::set<std::string> ambiguous_names;
};

template <typename K>
void add_ratio(std::map<K, double>& to, std::set<K>& ambiguous, const K& key, double ratio) {
  if (ambiguous.count(key)) return;
  auto [it, fresh] = to.emplace(key, ratio);
  if (!fresh && std::abs(it->second / ratio - 1) > 1e-9) {
    to.erase(it);
    ambiguous.insert(key);
  }
}

Ratios ratios(const model::StepCosts& a, const model::StepCosts& b, double layers_weight,
              const cost::KernelsDb& db) {
  Ratios r;
  const auto la = op_lists(a), lb = op_lists(b);
  for (size_t l = 0; l < la.size(); ++l) {
    const double weight = l < 3 ? layers_weight : 1.0;  // a stage runs its layers many times
    for (size_t i = 0; i < la[l]->size(); ++i) {
      const model::KernelOp &x = (*la[l])[i], &y = (*lb[l])[i];
      if (x.comm()) {
        auto& [nu, tu] = r.by_group[x.group];
        nu += weight * y.dur_us, tu += weight * x.dur_us;
        continue;
      }
      if (x.dur_us <= 0) continue;
      const double ratio = y.dur_us / x.dur_us;
      if (x.gemm) {
        auto& [nu, tu] = r.by_shape[Shape{x.gemm->m, x.gemm->n, x.gemm->k, x.gemm->batch}];
        nu += weight * y.dur_us, tu += weight * x.dur_us;
        continue;
      }
      add_ratio(r.by_name, r.ambiguous_names, x.name, ratio);
      auto& [nu, tu] = r.by_class[cost::classify_kernel(db, x.name)];
      nu += weight * y.dur_us, tu += weight * x.dur_us;
    }
  }
  auto& [nu, tu] = r.by_group[model::CommGroup::kPp];
  nu += b.p2p.dur_us, tu += a.p2p.dur_us;
  return r;
}

// One GPU's gradient reductions of `params` parameters, in buckets of the stack's size: more
// parameters make more buckets, which the traced kernels share (docs/design.md).
double reductions_us(const model::StepCosts& c, double params) {
  if (params <= 0) return 0;
  const double bucket = std::min(params, c.bucket_params);
  const double full = std::floor(params / bucket), rest = params - full * bucket;
  return full * c.grad_reduce(bucket).dur_us + (rest > 0 ? c.grad_reduce(rest).dur_us : 0);
}

double share(const std::pair<double, double>& p) {
  return p.second > 0 ? p.first / p.second : 0;
}

model::CommGroup group_of(GroupRole role) {
  switch (role) {
    case GroupRole::kTp:
      return model::CommGroup::kTp;
    case GroupRole::kCp:
      return model::CommGroup::kCp;
    case GroupRole::kPp:
      return model::CommGroup::kPp;
    default:
      return model::CommGroup::kNone;
  }
}

}  // namespace

std::string shape_reprice_refusal(const ShapeRepriceRequest& r, const cost::KernelsDb& db) {
  const model::ParallelConfig &a = r.traced_cfg, &b = r.new_cfg;
  if (a.tp != b.tp || a.cp != b.cp || a.pp != b.pp || a.dp != b.dp || a.interleave != b.interleave)
    return "the layout changes: another tensor degree adds or removes collectives and ranks";
  if (a.gbs / (a.mbs * a.dp) != b.gbs / (b.mbs * b.dp))
    return strprintf("the micro-batch count changes (%lld -> %lld micro-batches; --gbs keeps it)",
                     static_cast<long long>(a.gbs / (a.mbs * a.dp)),
                     static_cast<long long>(b.gbs / (b.mbs * b.dp)));
  if (r.traced_model.layers != r.new_model.layers)
    return "the layer count changes too (--layers edits the traced graph on its own)";
  const model::StepCosts x = price(r.traced_model, a, r, db), y = price(r.new_model, b, r, db);
  const auto lx = op_lists(x), ly = op_lists(y);
  for (size_t l = 0; l < lx.size(); ++l)
    if (lx[l]->size() != ly[l]->size())
      return "the model's layer runs other kernels at the new shapes";
  return "";
}

ShapeReprice reprice_shapes(const graph::Graph& g, const TracedKernels& tk, const JobStructure& js,
                            const ShapeRepriceRequest& r, const cost::KernelsDb& db) {
  const model::StepCosts a = price(r.traced_model, r.traced_cfg, r, db);
  const model::StepCosts b = price(r.new_model, r.new_cfg, r, db);
  const double layers_weight = static_cast<double>(r.traced_model.layers) /
                               std::max(1, r.traced_cfg.pp * r.traced_cfg.interleave);
  const Ratios q = ratios(a, b, layers_weight, db);
  std::map<std::string, GroupRole> role;
  for (const auto& pg : js.groups) role[pg.name] = pg.role;
  const int per_stage = std::max(1, js.ranks_per_stage());
  const size_t stages = r.params_before_by_stage.size();
  auto stage_params = [&](int32_t rank, double* before, double* after) {
    const size_t s = std::min(stages - 1, static_cast<size_t>(rank / per_stage));
    *before = r.params_before_by_stage[s], *after = r.params_after_by_stage[s];
  };
  const PeerWaits waits = peer_waits(g, tk, db);
  ShapeReprice out;
  out.graph = g;
  std::set<std::string> kept;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel) continue;
    size_t ti = 0;
    const trace::ClassifiedKernel* k = tk.kernel_of(g, v, &ti);
    const std::string& name = g.names[g.name[v]];
    double ratio = 0;
    if (k && k->gemm) {
      auto it = q.by_shape.find({k->gemm->m, k->gemm->n, k->gemm->k, k->gemm->batch});
      if (it != q.by_shape.end()) ratio = share(it->second);
    } else if (k && k->kernel_class == "comm") {
      const trace::Event& e = tk.tables[ti]->events[k->event];
      GroupRole gr = GroupRole::kUnknown;
      if (e.collective >= 0) {
        const std::string& pg = tk.tables[ti]->collectives[e.collective].process_group;
        auto it = role.find(pg.empty() ? "(unnamed)" : pg);
        if (it != role.end()) gr = it->second;
      }
      if (gr == GroupRole::kDp && stages > 0) {
        // The gradients of one GPU's parameters, in the traced buckets.
        double before = 0, after = 0;
        stage_params(g.resources[g.resource[v]].rank, &before, &after);
        const double t0 = reductions_us(a, before);
        if (t0 > 0) ratio = reductions_us(b, after) / t0;
      } else if (auto it = q.by_group.find(group_of(gr)); it != q.by_group.end()) {
        ratio = share(it->second);
      }
    } else if (k && k->kernel_class == "optimizer" && stages > 0) {
      double before = 0, after = 0;
      stage_params(g.resources[g.resource[v]].rank, &before, &after);
      if (before > 0) ratio = after / before;
    } else if (k) {
      if (auto it = q.by_name.find(name); it != q.by_name.end())
        ratio = it->second;
      else if (auto c = q.by_class.find(k->kernel_class); c != q.by_class.end())
        ratio = share(c->second);
    }
    if (ratio <= 0) {
      ++out.kept;
      kept.insert(name + " (" + (k ? k->kernel_class : std::string("unclassified")) + ")");
      continue;
    }
    // A collective's wait for its peers (inside its duration on one rank's trace; a folder's
    // rendezvous has taken it out already) stays as traced: the ratio scales its transfer.
    const KernelWait* kw = k && k->kernel_class == "comm" ? waits.of(v) : nullptr;
    const double wait_us = kw && kw->from != TransferFrom::kRendezvous ? kw->wait_us : 0.0;
    out.graph.dur_us[v] = wait_us + (g.dur_us[v] - wait_us) * ratio;
    ++out.repriced;
  }
  out.kept_kinds.assign(kept.begin(), kept.end());
  return out;
}

}  // namespace lumos::whatif
