#include "whatif/traced_config.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "common/error.hpp"
#include "common/format.hpp"
#include "model/step_costs.hpp"
#include "whatif/traced_passes.hpp"

namespace lumos::whatif {

namespace {

using Shape = std::tuple<int64_t, int64_t, int64_t, int64_t>;

std::string shape_text(const Shape& s) {
  return strprintf("%lld x %lld x %lld%s", static_cast<long long>(std::get<0>(s)),
                   static_cast<long long>(std::get<1>(s)), static_cast<long long>(std::get<2>(s)),
                   std::get<3>(s) > 1
                       ? strprintf(" (batch %lld)", static_cast<long long>(std::get<3>(s))).c_str()
                       : "");
}

std::vector<Shape> layer_gemms(const model::ModelSpec& m, const model::ParallelConfig& c,
                               const cost::KernelsDb& db, const model::StepCostOptions& opt = {}) {
  const model::Layout layout = model::check_layout(m, c);
  const cost::GpuSpec& gpu = db.gpu("h100");  // shapes only: any GPU prices them
  const model::StepCosts costs =
      model::price_step(m, c, layout, db, gpu, db.default_topology_for(gpu), opt);
  std::vector<Shape> out;
  for (const auto& op : costs.layer_fwd)
    if (op.gemm) out.emplace_back(op.gemm->m, op.gemm->n, op.gemm->k, op.gemm->batch);
  return out;
}

std::map<Shape, int> counted(const std::vector<Shape>& shapes) {
  std::map<Shape, int> out;
  for (const auto& s : shapes) out[s]++;
  return out;
}

// Why the model's layer GEMMs are not the traced ones: the first that differs in order and the
// dimension, and the tensor degree that would give the traced shapes, if one does.
std::string gemm_mismatch(const std::vector<Shape>& traced, const std::vector<Shape>& modelled,
                          const model::ModelSpec& m, const model::ParallelConfig& c,
                          const cost::KernelsDb& db) {
  std::string why;
  const size_t n = std::min(traced.size(), modelled.size());
  for (size_t i = 0; i < n && why.empty(); ++i) {
    const Shape &t = traced[i], &x = modelled[i];
    if (t == x) continue;
    const char* dim = std::get<0>(t) != std::get<0>(x)   ? "M (tokens)"
                      : std::get<1>(t) != std::get<1>(x) ? "N"
                      : std::get<2>(t) != std::get<2>(x) ? "K"
                                                         : "batch";
    why = strprintf("GEMM %zu of the layer differs in %s: traced %s, modelled %s", i + 1, dim,
                    shape_text(t).c_str(), shape_text(x).c_str());
  }
  if (why.empty())
    why =
        strprintf("the traced layer runs %zu GEMMs, the model %zu", traced.size(), modelled.size());
  for (int tp : {1, 2, 4, 8, 16, 32, 64}) {
    if (tp == c.tp) continue;
    model::ParallelConfig x = c;
    x.tp = tp;
    x.sequence_parallel = c.sequence_parallel && tp > 1;
    try {
      if (counted(layer_gemms(m, x, db)) == counted(traced))
        return why + strprintf("; the traced shapes match tp %d (--traced tp=%d)", tp, tp);
    } catch (const InputError&) {
      // a degree the model does not divide by: not a candidate
    }
  }
  // A framework that runs the projections apart (torchtitan's wq, wk, wv and w1, w3) or fused.
  const bool apart = db.stack(c.stack.empty() ? db.default_stack : c.stack).separate_projections;
  if (apart) {
    model::StepCostOptions fused;
    fused.without_terms = 1u << static_cast<int>(model::Term::kSeparateProjections);
    if (counted(layer_gemms(m, c, db, fused)) == counted(traced))
      return why +
             "; the traced layer runs its projections fused (one QKV and one FC1 GEMM): "
             "pick a stack that fuses them (--stack megatron-core)";
  }
  for (const auto& [name, stack] : db.stacks) {
    if (apart || !stack.separate_projections) continue;
    model::ParallelConfig x = c;
    x.stack = name;
    try {
      if (counted(layer_gemms(m, x, db)) == counted(traced))
        return why + strprintf(
                         "; the traced shapes match stack %s, whose projections run apart "
                         "(--stack %s)",
                         name.c_str(), name.c_str());
    } catch (const InputError&) {
      // not a candidate
    }
  }
  return why + "; no tensor degree of this model gives the traced shapes";
}

}  // namespace

TracedConfig traced_config(const JobStructure& js, const model::ModelSpec& m,
                           const std::string& stack, const cost::KernelsDb& db) {
  return traced_config(js, m, stack, db, TracedDegrees{});
}

TracedConfig traced_config(const JobStructure& js, const model::ModelSpec& m,
                           const std::string& stack, const cost::KernelsDb& db,
                           const TracedDegrees& given) {
  const std::string where = "lumos whatif: ";
  model::validate(m);  // a model file may leave fields out: no division by a zero sequence
  for (const auto& g : js.groups)
    LUMOS_EXPECT(g.size > 0 || g.role == GroupRole::kUnknown,
                 where + "this edit needs the size of group " + g.name +
                     ", which the trace "
                     "does not give (no NCCL group args, no distributedInfo)");
  TracedConfig tc;
  tc.model = m;
  model::ParallelConfig& c = tc.cfg;
  // The gradient group reduces over dp x cp ranks.
  c.tp = std::max(1, js.tp), c.cp = std::max(1, js.cp), c.pp = js.pp;
  c.dp = std::max(1, js.dp % c.cp == 0 ? js.dp / c.cp : js.dp);
  c.stack = stack;
  const TracedPasses passes_found = traced_passes(js, given);
  const int64_t microbatches = passes_found.microbatches;
  c.interleave = passes_found.interleave;
  const int64_t layers = passes_found.layers;
  if (layers != m.layers) {
    tc.assumed.push_back(strprintf("layers: %lld from the trace (%s), not the model's %lld",
                                   static_cast<long long>(layers), passes_found.layers_from.c_str(),
                                   static_cast<long long>(m.layers)));
    tc.model.layers = layers;
  }
  // Micro-batch size from the tokens of a layer GEMM: mbs x seq / cp.
  std::map<Shape, int> traced;
  int64_t tokens = 0;
  for (const auto& k : js.forward.kernels)
    if (k.gemm) {
      traced[{k.gemm->m, k.gemm->n, k.gemm->k, k.gemm->batch}]++;
      if (!tokens && k.gemm->batch == 1) tokens = k.gemm->m, c.dtype = k.gemm->dtype;
    }
  LUMOS_EXPECT(tokens > 0, where +
                               "the traced layer has no GEMM with a known shape (the trace "
                               "records no input shapes)");
  if (given.mbs > 0) {
    LUMOS_EXPECT(given.mbs * m.seq == tokens * c.cp,
                 strprintf("%sthe traced layer's GEMMs see %lld tokens; --traced mbs=%lld with "
                           "the model's sequence of %lld over cp %d makes %lld%s",
                           where.c_str(), static_cast<long long>(tokens),
                           static_cast<long long>(given.mbs), static_cast<long long>(m.seq), c.cp,
                           static_cast<long long>(given.mbs * m.seq / c.cp),
                           (tokens * c.cp) % m.seq == 0
                               ? strprintf(" (mbs %lld would match)",
                                           static_cast<long long>(tokens * c.cp / m.seq))
                                     .c_str()
                               : ""));
  }
  LUMOS_EXPECT((tokens * c.cp) % m.seq == 0,
               strprintf("%sthe traced layer's GEMMs see %lld tokens, not a multiple of the "
                         "model's sequence of %lld over cp %d (is the model right?)",
                         where.c_str(), static_cast<long long>(tokens),
                         static_cast<long long>(m.seq), c.cp));
  c.mbs = tokens * c.cp / m.seq;
  LUMOS_EXPECT(c.mbs > 0, where + "the traced layer's GEMMs see fewer tokens than one sequence");
  c.gbs = c.mbs * microbatches * c.dp;
  LUMOS_EXPECT(
      given.gbs <= 0 || given.gbs == c.gbs,
      strprintf("%s--traced gbs=%lld is not mbs %lld x %lld micro-batches (in the "
                "trace) x dp %d = %lld",
                where.c_str(), static_cast<long long>(given.gbs), static_cast<long long>(c.mbs),
                static_cast<long long>(microbatches), c.dp, static_cast<long long>(c.gbs)));
  const ProcessGroup* tp = js.group_with(GroupRole::kTp);
  c.sequence_parallel = tp && tp->ops.count(trace::CollectiveType::kReduceScatter) &&
                        !tp->ops.count(trace::CollectiveType::kAllReduce);
  const ProcessGroup* dp = js.group_with(GroupRole::kDp);
  c.distributed_optimizer = dp && dp->ops.count(trace::CollectiveType::kReduceScatter);
  tc.assumed.push_back("recomputation: none (a recomputed forward would count as micro-batches)");
  tc.assumed.push_back("software stack: " + (stack.empty() ? db.default_stack : stack));
  // The model must run the traced layer's GEMMs at this layout.
  std::vector<Shape> traced_list;
  for (const auto& k : js.forward.kernels)
    if (k.gemm) traced_list.emplace_back(k.gemm->m, k.gemm->n, k.gemm->k, k.gemm->batch);
  const std::vector<Shape> modelled = layer_gemms(tc.model, c, db);
  LUMOS_EXPECT(counted(modelled) == traced,
               strprintf("%s%s at tp %d, mbs %lld does not run the traced layer's GEMMs: %s "
                         "(is the model right?)",
                         where.c_str(), m.name.c_str(), c.tp, static_cast<long long>(c.mbs),
                         gemm_mismatch(traced_list, modelled, tc.model, c, db).c_str()));
  return tc;
}

}  // namespace lumos::whatif
