// The builder's two passes (count, then build and flatten) and the public entry points of
// step_graph.hpp; what the passes emit is in the other files step_graph_builder.hpp lists.
#include "model/step_graph.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/error.hpp"
#include "model/step_graph_builder.hpp"

namespace lumos::model {
namespace detail {

// Pass::kBuild only. Counts first (a counting pass stopped at max_nodes) to refuse a graph
// above the limit before allocating it, and to reserve what it needs (folded: at most).
template <Pass P>
StepGraph Builder<P>::build(uint64_t max_nodes, const GraphCount* counted) {
  GraphCount expect;
  try {
    expect = counted && counted->nodes <= max_nodes
                 ? *counted
                 : Builder<Pass::kCount>(m_, c_, l_, k_, fold_).count(max_nodes);
  } catch (const CountLimitReached&) {
    throw InputError("the iteration has more than " + std::to_string(max_nodes) +
                     " kernels and calls, the limit (fewer micro-batches or layers, or a "
                     "larger --mbs)");
  }
  // A fold's layer is recorded in the draft before it is cut out again.
  d_.nodes.reserve(expect.nodes + expect.layer_nodes);
  d_.edges.reserve(expect.edges + expect.layer_edges);
  meta_.reserve(expect.nodes + expect.layer_nodes);
  if (plan_) node_period_.reserve(expect.nodes + expect.layer_nodes);
  iteration();
  if (plan_ && !fold_microbatches()) throw NotPeriodic{};
  return finish();
}

// Pass::kCount only. Throws CountLimitReached once the graph has more than stop_above nodes.
template <Pass P>
GraphCount Builder<P>::count(uint64_t stop_above) {
  stop_above_ = stop_above;
  iteration();
  return count_;
}

// The origin, each stage's resources and step, then each stage's iteration; every pipeline
// message must have met its peer.
template <Pass P>
void Builder<P>::iteration() {
  node_origin();
  out_.stages = c_.pp;
  out_.world_size = static_cast<int32_t>(c_.gpus());
  out_.gpus_per_node = k_.topo ? k_.topo->gpus_per_node : 8;
  const int64_t per_stage_ranks = int64_t{c_.tp} * c_.cp * c_.dp;
  stages_.resize(static_cast<size_t>(c_.pp));
  for (int s = 0; s < c_.pp; ++s) {
    const auto rank = static_cast<int32_t>(s * per_stage_ranks);
    out_.stage_rank.push_back(rank);
    Stage& st = stages_[static_cast<size_t>(s)];
    st.thread = add_resource({graph::ResourceKind::kThread, rank, 1000, kThreadId});
    const int64_t device = rank % std::max(1, out_.gpus_per_node);
    for (int r = 0; r < kNumStreams; ++r)
      st.stream[static_cast<size_t>(r)] =
          add_resource({graph::ResourceKind::kStream, rank, device, kStreamIds[r]});
    steps_.push_back({"ProfilerStep#1", rank, graph::kOrigin, 0});
    for (CommGroup grp : {CommGroup::kTp, CommGroup::kCp, CommGroup::kDp})
      st.group_name[static_cast<size_t>(grp)] =
          std::string(to_string(grp)) + "/stage" + std::to_string(s);
  }
  messages_.resize(2 * static_cast<size_t>(l_.microbatches) * virtual_stages_);
  for (int s = 0; s < c_.pp; ++s) stage_iteration(s);
  for (const MsgEnds& ends : messages_)
    if ((ends.send_arrive == kNone) != (ends.recv_arrive == kNone))
      throw std::logic_error("step graph: unmatched pipeline message");
}

template <Pass P>
uint32_t Builder<P>::add_resource(graph::Resource r) {
  resources_.push_back(r);
  return static_cast<uint32_t>(resources_.size() - 1);
}

template <Pass P>
StepGraph Builder<P>::finish() {
  std::vector<graph::NodeId> id;
  out_.graph = graph::flatten(
      d_, &id, [&](uint32_t n) { return "node '" + names_[d_.nodes[n].name] + "'"; },
      "model-driven step graph");
  graph::Graph& g = out_.graph;
  g.resources = std::move(resources_);
  g.names = std::move(names_);
  g.steps = std::move(steps_);
  for (auto& st : g.steps) st.marker = id[st.marker];
  g.rank = -1;
  g.source = m_.name + " (model-driven)";
  out_.build_index.resize(g.num_nodes());
  out_.node_slot.assign(g.num_nodes(), UINT32_MAX);
  for (uint32_t dn = 0; dn < d_.nodes.size(); ++dn) {
    out_.build_index[id[dn]] = dn;
    if (meta_[dn].slot >= 0) out_.node_slot[id[dn]] = static_cast<uint32_t>(meta_[dn].slot);
  }
  out_.meta = std::move(meta_);
  for (uint32_t e : stage_end_) out_.stage_end.push_back(id[e]);
  return std::move(out_);
}

}  // namespace detail

using detail::Builder;
using detail::CountLimitReached;
using detail::Pass;

namespace {

// The graph with its steady state folded (MicrobatchFold), or none when the layout's schedule
// is too short to fold or its built periods do not repeat.
std::optional<StepGraph> microbatch_folded(const ModelSpec& m, const ParallelConfig& c,
                                           const Layout& l, const StepCosts& costs,
                                           uint64_t max_nodes) {
  const detail::MicrobatchPlan plan = detail::microbatch_plan(c, l);
  if (plan.small == 0) return std::nullopt;
  Layout small = l;
  small.microbatches = plan.small;
  try {
    return Builder<Pass::kBuild>(m, c, small, costs, true, &plan).build(max_nodes, nullptr);
  } catch (const detail::NotPeriodic&) {
    return std::nullopt;
  }
}

}  // namespace

StepGraphCount count_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                                const StepCosts& costs, uint64_t stop_above, bool fold_layers) {
  if (fold_layers) {
    // Small enough to build: its count is exact. One too large to build is counted below.
    try {
      if (auto g = microbatch_folded(m, c, l, costs, kMaxStepGraphNodes)) {
        StepGraphCount counted;
        counted.nodes = std::min<uint64_t>(g->graph.num_nodes(), stop_above + 1);
        counted.edges = g->graph.num_edges();
        counted.built = std::make_shared<StepGraph>(std::move(*g));
        return counted;
      }
    } catch (const InputError&) {
    }
  }
  try {
    return Builder<Pass::kCount>(m, c, l, costs, fold_layers).count(stop_above);
  } catch (const CountLimitReached&) {
    StepGraphCount over;
    over.nodes = stop_above + 1;
    return over;
  }
}

uint64_t step_graph_size(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                         const StepCosts& costs, uint64_t stop_above, bool fold_layers) {
  return count_step_graph(m, c, l, costs, stop_above, fold_layers).nodes;
}

StepGraph build_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                           const StepCosts& costs, uint64_t max_nodes, bool fold_layers,
                           const StepGraphCount* counted) {
  if (fold_layers && counted && counted->built) {
    const std::shared_ptr<StepGraph> built = std::move(counted->built);
    LUMOS_EXPECT(built->graph.num_nodes() <= max_nodes,
                 "the iteration has more than " + std::to_string(max_nodes) +
                     " kernels and calls, the limit (fewer micro-batches or layers, or a larger "
                     "--mbs)");
    return std::move(*built);
  }
  if (fold_layers)
    if (auto g = microbatch_folded(m, c, l, costs, max_nodes)) return std::move(*g);
  return Builder<Pass::kBuild>(m, c, l, costs, fold_layers).build(max_nodes, counted);
}

}  // namespace lumos::model
