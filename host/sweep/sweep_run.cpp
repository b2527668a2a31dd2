#include "sweep/sweep_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "carbon/energy.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/heap_tuning.hpp"
#include "common/memory_budget.hpp"
#include "common/thread_pool.hpp"
#include "engine/engine.hpp"
#include "model/flops.hpp"
#include "model/graph_budget.hpp"
#include "model/memory_footprint.hpp"
#include "model/param_plan.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "model/step_graph_builder.hpp"  // microbatch_plan: which layouts fold alike
#include "replay/replay_program.hpp"
#include "sweep/graph_reuse.hpp"
#include "sweep/sweep_batch.hpp"

namespace lumos::sweep {

using namespace lumos::model;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Everything of a configuration that may shape its graph, but for the software stack: stacks
// that differ only in constants (kernel efficiencies, launch costs) give graphs of the same
// structure, which the batches below find by comparing the priced costs (same_structure).
// Without `layout`: the key of a family, whose layouts differ at most in their tensor, context
// and data parallel degrees, micro-batch size and global batch size, which may shape the graph
// alike (same_structure and same_param_shape tell).
std::string structure_key(const ParallelConfig& c, bool layout = true) {
  auto degree = [&](int64_t d) { return layout ? std::to_string(d) : std::string("-"); };
  return degree(c.tp) + "/" + degree(c.cp) + "/" + std::to_string(c.pp) + "/" + degree(c.dp) + "/" +
         std::to_string(c.interleave) + "/" + degree(c.mbs) + "/" + degree(c.gbs) + "/" +
         to_string(c.recompute) + "/" + std::to_string(c.sequence_parallel) +
         std::to_string(c.distributed_optimizer) + std::to_string(c.fsdp) +
         std::to_string(c.split_counts_embedding) + "/" + cost::to_string(c.dtype) + "/" +
         std::to_string(c.gpus_per_node) + "/" +
         (c.overlap_grad_reduce ? std::to_string(*c.overlap_grad_reduce) : "-");
}

struct Group {
  std::vector<size_t> rows;  // indices into the result's rows
  // Shards take the layouts of one tensor and context degree and micro-batch size (their
  // `slice`, numbered in the order met) together: families spanning the degrees would leave a
  // sweep too few to spread over many processes.
  size_t slice = 0;
};

// Groups whose layouts differ only in their degrees, micro-batch size and global batch size, run
// one after another on one thread: a kept graph serves those of its shape (graph_reuse.hpp), and
// the powers of a period's matrix all whose period is the same.
struct Family {
  std::vector<Group> groups;
};

// A group's configurations, priced: those sharing the first one's structure replay in one batch
// on its graph; the rest are priced again as a group of their own.
// Configurations of a group on the same GPU, network and stack share their costs (priced once:
// regions, PUEs and speed factors change no kernel).
struct Priced {
  size_t row;
  const cost::GpuSpec* gpu;
  std::shared_ptr<const StepCosts> costs;
  std::shared_ptr<const ParamPlan> plan;  // its buckets', gathers' and optimizer's sizes
};

bool same_shape(const Priced& a, const Priced& b) {
  return same_structure(*a.costs, *b.costs) && same_param_shape(*a.plan, *b.plan);
}

// Seconds and counts of one group, added to the sweep's under its lock.
struct GroupStats {
  double build_s = 0, price_s = 0, replay_s = 0, wait_s = 0;
  uint64_t graphs = 0, estimated = 0;
};

// Groups in a stable order of `key`, taken once per group in their order (a key numbers what it
// meets first).
template <typename Key>
void sort_groups_by(std::vector<Group>* groups, Key key) {
  std::vector<std::pair<size_t, size_t>> order;  // (key, place)
  order.reserve(groups->size());
  for (size_t i = 0; i < groups->size(); ++i) order.emplace_back(key((*groups)[i]), i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Group> sorted;
  sorted.reserve(groups->size());
  for (const auto& entry : order) sorted.push_back(std::move((*groups)[entry.second]));
  *groups = std::move(sorted);
}

// Each row's variant with its hardware resolved (GPU and topology names, the topology's NIC,
// node size and the GPU's NVLink where not given, the stack, region and PUE), and the rows grouped
// by the structure of their graph.
std::vector<Family> resolve_and_group(const std::vector<SweepVariant>& all,
                                      const cost::KernelsDb& db, std::vector<SweepRow>* rows) {
  std::map<std::string, std::pair<size_t, size_t>> group_of;  // (family, group in it)
  std::map<std::string, size_t> family_of;
  std::map<std::string, size_t> slice_of;
  std::vector<Family> families;
  rows->resize(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    SweepRow& r = (*rows)[i];
    r.variant = all[i];
    const cost::GpuSpec& gpu = db.gpu(r.variant.gpu);
    const cost::Topology& topo =
        r.variant.topology.empty() ? db.default_topology_for(gpu) : db.topology(r.variant.topology);
    r.variant.gpu = gpu.name;
    r.variant.topology = topo.name;
    if (r.variant.nic_gbps <= 0) r.variant.nic_gbps = topo.nic_gbps;
    if (r.variant.gpus_per_node <= 0) r.variant.gpus_per_node = topo.gpus_per_node;
    if (r.variant.nvlink_gbps <= 0) r.variant.nvlink_gbps = gpu.nvlink_gbps;
    r.variant.cfg.gpus_per_node = r.variant.gpus_per_node;
    r.variant.cfg.stack =
        db.stack(r.variant.cfg.stack.empty() ? db.default_stack : r.variant.cfg.stack).name;
    r.variant.region = db.carbon.region(r.variant.region).name;
    if (r.variant.pue <= 0) r.variant.pue = db.carbon.pue;
    r.capacity_gib = gpu.hbm_gib;
    auto [fam, new_family] =
        family_of.emplace(structure_key(r.variant.cfg, false), families.size());
    if (new_family) families.emplace_back();
    Family& f = families[fam->second];
    auto [it, fresh] = group_of.emplace(structure_key(r.variant.cfg),
                                        std::make_pair(fam->second, f.groups.size()));
    if (fresh) {
      f.groups.emplace_back();
      const std::string slice =
          structure_key(r.variant.cfg, false) + "/" + std::to_string(r.variant.cfg.tp) + "/" +
          std::to_string(r.variant.cfg.cp) + "/" + std::to_string(r.variant.cfg.mbs);
      f.groups.back().slice = slice_of.emplace(slice, slice_of.size()).first->second;
    }
    families[it->second.first].groups[it->second.second].rows.push_back(i);
  }
  // A family's layouts of one tensor, context and micro-batch size run one after another, as
  // they did in families of their own: their periods' durations repeat (batch_fold.hpp keeps a
  // few period matrices' powers).
  for (Family& f : families) {
    std::map<std::string, size_t> first;
    auto key = [&](const Group& g) {
      const ParallelConfig& c = (*rows)[g.rows.front()].variant.cfg;
      const std::string k =
          std::to_string(c.tp) + "/" + std::to_string(c.cp) + "/" + std::to_string(c.mbs);
      return first.emplace(k, first.size()).first->second;
    };
    sort_groups_by(&f.groups, key);
    // Then those that may share a graph one after another (graph_reuse.hpp keeps only a few):
    // with tensor parallelism or without (which adds kernels), of one context degree (the
    // attention runs in as many steps), whose micro-batches fold from the same small schedule
    // or, unfolded, are as many.
    std::map<std::string, size_t> first_shared;
    auto shared = [&](const Group& g) {
      const ParallelConfig& c = (*rows)[g.rows.front()].variant.cfg;
      Layout l;
      const int64_t per_step = int64_t{c.dp} * c.mbs;
      l.microbatches = per_step > 0 && c.gbs % per_step == 0 ? c.gbs / per_step : 0;
      const int64_t small = detail::microbatch_plan(c, l).small;
      const std::string k = std::to_string(c.tp > 1) + "/" + std::to_string(c.cp) + "/" +
                            (small ? "f" + std::to_string(small) : std::to_string(l.microbatches));
      return first_shared.emplace(k, first_shared.size()).first->second;
    };
    sort_groups_by(&f.groups, shared);
  }
  return families;
}

// The families of a shard as its threads take them: largest first, so that no thread is left
// with a large one at the end (a family's work grows with its rows and virtual stages). One with
// more than half a thread's share of the work is split into the layouts with and without tensor
// parallelism and of each context degree, which never share a graph (their layers have other
// kernels).
std::vector<Family> schedule(std::vector<Family> families, const std::vector<SweepRow>& rows,
                             unsigned threads) {
  auto work_of = [&](const Family& f) {
    double w = 0;
    for (const Group& g : f.groups) {
      const ParallelConfig& c = rows[g.rows.front()].variant.cfg;
      w += static_cast<double>(g.rows.size()) * c.pp * c.interleave;
    }
    return w;
  };
  double total = 0;
  for (const Family& f : families) total += work_of(f);
  std::vector<Family> out;
  for (Family& f : families) {
    if (threads < 2 || work_of(f) <= total / (2.0 * threads)) {
      out.push_back(std::move(f));
      continue;
    }
    std::map<std::pair<bool, int>, size_t> part;  // (TP > 1, CP degree) -> its family in `out`
    for (Group& g : f.groups) {
      const ParallelConfig& c = rows[g.rows.front()].variant.cfg;
      auto [it, fresh] = part.emplace(std::make_pair(c.tp > 1, c.cp), out.size());
      if (fresh) out.emplace_back();
      out[it->second].groups.push_back(std::move(g));
    }
  }
  std::vector<double> work;
  for (const Family& f : out) work.push_back(work_of(f));
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return work[a] > work[b]; });
  std::vector<Family> sorted;
  for (size_t i : order) sorted.push_back(std::move(out[i]));
  return sorted;
}

// Each configuration's network (its topology with its NIC line rate and GPUs per node) and GPU
// (with its NVLink bandwidth). StepCosts keeps a pointer to the network, so the copies live as
// long as the sweep.
class Hardware {
 public:
  Hardware(const std::vector<SweepRow>& rows, const cost::KernelsDb& db) {
    for (const SweepRow& r : rows) {
      cost::Topology t = db.topology(r.variant.topology);
      t.nic_gbps = r.variant.nic_gbps;
      t.gpus_per_node = r.variant.gpus_per_node;
      networks_.emplace(network_key(r.variant), t);
      const cost::GpuSpec& g = db.gpu(r.variant.gpu);
      gpus_.emplace(std::make_pair(g.name, r.variant.nvlink_gbps),
                    r.variant.nvlink_gbps == g.nvlink_gbps
                        ? g
                        : cost::with_nvlink_gbps(g, r.variant.nvlink_gbps));
    }
  }
  const cost::Topology& topology(const SweepVariant& v) const {
    return networks_.at(network_key(v));
  }
  const cost::GpuSpec& gpu(const SweepVariant& v) const {
    return gpus_.at(std::make_pair(v.gpu, v.nvlink_gbps));
  }

 private:
  using NetworkKey = std::tuple<std::string, double, int>;
  static NetworkKey network_key(const SweepVariant& v) {
    return NetworkKey(v.topology, v.nic_gbps, v.gpus_per_node);
  }
  std::map<NetworkKey, cost::Topology> networks_;
  std::map<std::pair<std::string, double>, cost::GpuSpec> gpus_;
};

// Runs the groups of one shard: each group's layout is checked and its configurations priced,
// then each batch of the same structure builds one graph and replays it for all of them.
class GroupRunner {
 public:
  GroupRunner(const SweepSpec& spec, const cost::KernelsDb& db, const SweepOptions& opt,
              std::vector<SweepRow>& rows)
      : spec_(spec),
        db_(db),
        opt_(opt),
        rows_(rows),
        hardware_(rows, db),
        budget_(opt.memory_budget_bytes),
        backend_(engine::resolve(opt.backend)) {}

  // Fills the group's rows; `s` gets its time and counts.
  void run(const Group& grp, FoldedGraphs* graphs, GroupStats* s) {
    const ParallelConfig& cfg = rows_[grp.rows.front()].variant.cfg;
    Layout layout;
    try {
      layout = check_layout(spec_.model, cfg);
    } catch (const InputError& e) {
      for (size_t i : grp.rows) rows_[i].reason = std::string("invalid layout: ") + e.what();
      return;
    }
    const std::vector<Priced> todo = price(grp, layout, s);
    // Batches: the first unplaced configuration's graph serves every one of the same structure.
    std::vector<uint8_t> placed(todo.size(), 0);
    for (size_t first = 0; first < todo.size(); ++first) {
      if (placed[first]) continue;
      std::vector<const Priced*> batch;
      for (size_t j = first; j < todo.size(); ++j)
        if (!placed[j] && same_shape(todo[first], todo[j]))
          batch.push_back(&todo[j]), placed[j] = 1;
      replay_batch(layout, batch, graphs, s);
    }
  }

 private:
  // The group's configurations that fit in their GPU's memory, priced; the others get their
  // reason. Memory is checked before any graph is built: what does not fit is not replayed.
  std::vector<Priced> price(const Group& grp, const Layout& layout, GroupStats* s) const {
    // The memory depends on the stack (its attention kernels), the same for the rest of a group.
    std::map<std::string, double> worst_of_stack;
    const auto t0 = Clock::now();
    std::vector<Priced> todo;
    using PriceKey = std::tuple<const cost::GpuSpec*, const cost::Topology*, std::string>;
    std::map<PriceKey,
             std::pair<std::shared_ptr<const StepCosts>, std::shared_ptr<const ParamPlan>>>
        priced;
    for (size_t i : grp.rows) {
      SweepRow& r = rows_[i];
      const ParallelConfig& cfg = r.variant.cfg;
      auto [it, fresh] = worst_of_stack.emplace(cfg.stack, 0.0);
      if (fresh) {
        const cost::StackSpec& stack = db_.stack(cfg.stack);
        for (const auto& st : memory_per_stage(spec_.model, cfg, layout, &stack))
          it->second = std::max(it->second, st.total_bytes());
      }
      r.memory_gib = it->second / (1024.0 * 1024.0 * 1024.0);
      const cost::GpuSpec& gpu = hardware_.gpu(r.variant);
      if (!gpu.peak_tflops[static_cast<size_t>(cfg.dtype)]) {
        r.reason = std::string("the GPU has no ") + cost::to_string(cfg.dtype) + " tensor cores";
        continue;
      }
      if (r.memory_gib > r.capacity_gib) {
        r.reason =
            strprintf("does not fit: %.1f GiB per GPU > %.1f GiB", r.memory_gib, r.capacity_gib);
        continue;
      }
      const cost::Topology& topo = hardware_.topology(r.variant);
      auto& [costs, plan] = priced[PriceKey(&gpu, &topo, cfg.stack)];
      if (!costs) {
        auto c = std::make_shared<StepCosts>(
            price_step(spec_.model, cfg, layout, db_, gpu, topo, spec_.cost_options));
        if (spec_.adjust_costs) spec_.adjust_costs(*c);
        // The plan reads of the costs only the bucket size and the data-parallel group.
        for (const auto& [key, other] : priced)
          if (other.first && other.first->bucket_params == c->bucket_params &&
              other.first->dp_group == c->dp_group)
            plan = other.second;
        if (!plan)
          plan = std::make_shared<const ParamPlan>(param_plan(spec_.model, cfg, layout, *c));
        costs = std::move(c);
      }
      todo.push_back({i, &gpu, costs, plan});
    }
    s->price_s += seconds_since(t0);
    return todo;
  }

  // One graph for the batch (refused past the largest graph `lumos estimate` builds, or past a
  // hard budget), replayed for every configuration of it.
  void replay_batch(const Layout& layout, const std::vector<const Priced*>& batch,
                    FoldedGraphs* graphs, GroupStats* s) {
    const ModelSpec& model = spec_.model;
    // The batch's configurations differ at most in hardware and stack constants: the first one's
    // configuration builds the graph.
    const ParallelConfig& cfg = rows_[batch.front()->row].variant.cfg;
    const StepCosts& base = *batch.front()->costs;
    // Runs of identical layers fold into max-plus matrices (exact while CPU calls keep their
    // speed: folding splits groups of kernel launches); the sizes below are the folded ones.
    const bool fold =
        opt_.fold_layers && std::all_of(batch.begin(), batch.end(), [&](const Priced* p) {
          return rows_[p->row].variant.speed[static_cast<size_t>(graph::NodeClass::kCpu)] == 1;
        });
    auto t0 = Clock::now();
    // A schedule whose steady state folds has a small graph, whatever its micro-batches: counting
    // it would build it (count_step_graph), so it is built once, here.
    std::shared_ptr<const replay::ReplayProgram> reused_program;
    std::shared_ptr<const StepGraph> reused_graph =
        !fold ? nullptr : graphs->reuse(cfg, layout, base, *batch.front()->plan, &reused_program);
    const bool reused = reused_graph != nullptr;
    std::shared_ptr<StepGraph> built = fold && !reused ? build_folded(cfg, layout, base) : nullptr;
    const StepGraph* ready = reused ? reused_graph.get() : built.get();
    const StepGraphCount counted =
        ready ? StepGraphCount{ready->graph.num_nodes(), ready->graph.num_edges(), 0, 0, nullptr}
              : count_step_graph(model, cfg, layout, base, kMaxStepGraphNodes, fold);
    const uint64_t nodes = counted.nodes;
    s->build_s += seconds_since(t0);
    // As `lumos estimate`, refused only past the largest graph it builds; a graph above the
    // budget waits to be built alone.
    const double need = std::min(static_cast<double>(nodes) * model::kEstimateBytesPerNode,
                                 opt_.memory_budget_bytes);
    if (nodes > kMaxStepGraphNodes) {
      for (const Priced* p : batch)
        rows_[p->row].reason = "graph too large to model (" + std::to_string(nodes) + " nodes)";
      return;
    }
    if (opt_.budget_is_hard &&
        static_cast<double>(nodes) * model::kEstimateBytesPerNode > opt_.memory_budget_bytes) {
      for (const Priced* p : batch)
        rows_[p->row].reason =
            "graph too large for the memory budget (" + std::to_string(nodes) + " nodes)";
      return;
    }
    t0 = Clock::now();
    const MemoryBudget::Hold hold(budget_, need);
    s->wait_s += seconds_since(t0);
    t0 = Clock::now();
    if (!ready)
      built = std::make_shared<StepGraph>(
          build_step_graph(model, cfg, layout, base, kMaxStepGraphNodes, fold, &counted));
    const StepGraph& sg = reused ? *reused_graph : *built;
    // Configurations with the same costs and speeds (other regions or PUEs) replay as one
    // variant of the batch: lane[k] is batch[k]'s. Each prices the graph (perhaps built for
    // another layout of its shape) with its own parameter counts.
    std::vector<uint32_t> lane(batch.size());
    std::vector<const StepCosts*> costs;
    std::vector<ClassSpeeds> speeds;
    std::vector<std::vector<double>> params;
    {
      std::map<std::pair<const StepCosts*, ClassSpeeds>, uint32_t> lane_of;
      for (size_t k = 0; k < batch.size(); ++k) {
        const ClassSpeeds& speed = rows_[batch[k]->row].variant.speed;
        auto [it, fresh] = lane_of.emplace(std::make_pair(batch[k]->costs.get(), speed),
                                           static_cast<uint32_t>(costs.size()));
        if (fresh) {
          costs.push_back(batch[k]->costs.get()), speeds.push_back(speed);
          params.push_back(slot_params(sg, *batch[k]->plan));
        }
        lane[k] = it->second;
      }
    }
    // The CUDA backend compiles its own program; the CPU backend takes this one, made while the
    // graph's memory is warm. One configuration (each layout of a layout search) replays the
    // graph in node order: compiling costs about four one-variant replays (replay_program.hpp).
    const bool on_cpu = backend_ == engine::Backend::kCpu;
    std::shared_ptr<const replay::ReplayProgram> program = std::move(reused_program);
    if (!program)
      program = std::make_shared<const replay::ReplayProgram>(
          !on_cpu             ? replay::ReplayProgram{}
          : costs.size() == 1 ? replay::node_order_program(sg.graph)
                              : replay::compile_program(sg.graph));
    if (!reused) {
      ++s->graphs;
      if (fold)
        graphs->keep(cfg, layout, batch.front()->costs, batch.front()->plan, built, program);
    }
    s->build_s += seconds_since(t0);
    t0 = Clock::now();
    const SlotBatch sb = slot_batch(sg, costs, speeds, &graphs->powers, &params);
    const replay::VariantBatch& b = sb.batch;
    const std::vector<model::KernelBusy>& busy = sb.busy;
    s->price_s += seconds_since(t0);
    t0 = Clock::now();
    // Rows need the step time, not the critical path's composition: finish times alone. Groups
    // run one per thread, so a batch on the CPU takes one.
    const replay::BatchResult br = engine::batch_replay(sg.graph, b, backend_, nullptr, false,
                                                        on_cpu ? program.get() : nullptr, 1);
    s->replay_s += seconds_since(t0);
    for (size_t k = 0; k < batch.size(); ++k) {
      finish_row(cfg, layout, *batch[k], br.makespan_us[lane[k]], busy[lane[k]]);
      ++s->estimated;
    }
    // A thread keeps a freed graph's pages for the next graph (already faulted in) unless the
    // process has grown past the budget.
    t0 = Clock::now();
    trim_heap_above(opt_.memory_budget_bytes);
    s->build_s += seconds_since(t0);
  }

  // The layout's graph with its micro-batches folded, when its steady state is long enough to
  // fold; none otherwise, or when building it fails (the count then gives the reason).
  std::shared_ptr<StepGraph> build_folded(const ParallelConfig& cfg, const Layout& layout,
                                          const StepCosts& costs) const {
    if (!folds_microbatches(cfg, layout.microbatches)) return nullptr;
    // Past this many nodes (a schedule whose periods do not repeat, built whole) the build is
    // refused here, and the graph is counted and built under the memory budget as any other.
    constexpr uint64_t kFoldedNodesAtMost = 1'000'000;
    try {
      return std::make_shared<StepGraph>(
          build_step_graph(spec_.model, cfg, layout, costs, kFoldedNodesAtMost, true));
    } catch (const InputError&) {
      return nullptr;
    }
  }

  // A replayed configuration's row: throughput, MFU, time to train, energy and carbon.
  void finish_row(const ParallelConfig& cfg, const Layout& layout, const Priced& p,
                  double step_time_us, const model::KernelBusy& busy) const {
    const ModelSpec& model = spec_.model;
    const double model_flops = megatron_model_flops(model, cfg.gbs, layout.padded_vocab);
    const double gpus = static_cast<double>(cfg.gpus());
    SweepRow& r = rows_[p.row];
    r.estimated = true;
    r.step_time_us = step_time_us;
    const double step_s = r.step_time_us * 1e-6;
    r.tokens_per_s = static_cast<double>(cfg.gbs) * static_cast<double>(model.seq) / step_s;
    r.mfu =
        model_flops / step_s / gpus * 1e-12 / *p.gpu->peak_tflops[static_cast<size_t>(cfg.dtype)];
    r.time_to_train_h = spec_.tokens_to_train / r.tokens_per_s / 3600.0;
    r.gpu_hours = r.time_to_train_h * gpus;
    // The graph holds one GPU per stage: a GPU's kernel time is the stages' mean.
    const double pp = static_cast<double>(cfg.pp);
    const carbon::EnergyParts e = carbon::step_energy(*p.gpu, db_.carbon, r.variant.pue,
                                                      r.step_time_us, busy.compute_bound_us / pp,
                                                      busy.memory_bound_us / pp, busy.comm_us / pp);
    r.gpu_power_w = e.gpu_j() / step_s;
    const double steps =
        spec_.tokens_to_train / (static_cast<double>(cfg.gbs) * static_cast<double>(model.seq));
    const carbon::CarbonAccount acc = carbon::carbon_account(
        e, gpus, steps, r.gpu_hours, db_.carbon.region(r.variant.region).g_per_kwh, db_.carbon);
    r.gpu_energy_kwh = acc.gpu_kwh, r.node_energy_kwh = acc.node_kwh;
    r.facility_energy_kwh = acc.facility_kwh, r.energy_kwh = acc.energy_kwh;
    r.grid_g_per_kwh = acc.grid_g_per_kwh, r.operational_kg = acc.operational_kg;
    r.embodied_kg = acc.embodied_kg, r.sci_kg = acc.sci_kg;
    r.feasible = true;
  }

  const SweepSpec& spec_;
  const cost::KernelsDb& db_;
  const SweepOptions& opt_;
  std::vector<SweepRow>& rows_;
  const Hardware hardware_;
  MemoryBudget budget_;
  const engine::Backend backend_;  // resolved once: auto asks the CUDA runtime
};

}  // namespace

SweepResult run_sweep(const SweepSpec& spec, const cost::KernelsDb& db, const SweepOptions& opt) {
  // Unknown names are bad input for the whole sweep, whichever configuration would meet them:
  // checked before anything is expanded.
  for (const std::string& g : spec.gpus) db.gpu(g);
  for (const std::string& t : spec.topologies)
    if (!t.empty()) db.topology(t);
  for (const std::string& s : spec.stacks) db.stack(s.empty() ? db.default_stack : s);
  for (const std::string& r : spec.regions) db.carbon.region(r);
  const std::vector<SweepVariant> all = expand(spec);
  LUMOS_EXPECT(!all.empty(), "sweep: no configuration has the GPU counts asked for (--gpus)");
  return run_sweep(spec, all, db, opt);
}

SweepResult run_sweep(const SweepSpec& spec, const std::vector<SweepVariant>& all,
                      const cost::KernelsDb& db, const SweepOptions& opt) {
  LUMOS_EXPECT(opt.shards >= 1 && opt.shard < opt.shards,
               "sweep: --shard " + std::to_string(opt.shard) + "/" + std::to_string(opt.shards) +
                   ": expected i/n with 0 <= i < n");
  const auto t_start = Clock::now();
  SweepResult out;
  out.stats.variants = all.size();
  std::vector<SweepRow> rows;
  std::vector<Family> families = resolve_and_group(all, db, &rows);
  std::vector<Family> shard;
  for (Family& f : families) {
    Family part;
    for (Group& g : f.groups)
      if (g.slice % opt.shards == opt.shard) part.groups.push_back(std::move(g));
    if (!part.groups.empty()) shard.push_back(std::move(part));
  }
  const unsigned threads = worker_threads(opt.threads);
  const std::vector<Family> mine = schedule(std::move(shard), rows, threads);
  uint64_t shard_rows = 0;
  for (const Family& f : mine) {
    out.stats.groups += f.groups.size();
    for (const Group& g : f.groups) shard_rows += g.rows.size();
  }
  GroupRunner runner(spec, db, opt, rows);
  std::mutex m;  // stats and progress
  std::atomic<size_t> next{0};
  uint64_t done = 0;
  run_workers(threads, [&] {
    for (size_t k; (k = next++) < mine.size();) {
      FoldedGraphs family_graphs;
      for (const Group& grp : mine[k].groups) {
        GroupStats s;
        runner.run(grp, &family_graphs, &s);
        std::lock_guard<std::mutex> lock(m);
        out.stats.build_s += s.build_s, out.stats.price_s += s.price_s;
        out.stats.replay_s += s.replay_s, out.stats.wait_s += s.wait_s;
        out.stats.graphs += s.graphs, out.stats.estimated += s.estimated;
        done += grp.rows.size();
        if (opt.progress) opt.progress(done, shard_rows);
      }
    }
  });
  for (const Family& f : mine)
    for (const Group& g : f.groups)
      for (size_t i : g.rows) out.rows.push_back(std::move(rows[i]));
  std::sort(out.rows.begin(), out.rows.end(),
            [](const SweepRow& a, const SweepRow& b) { return a.variant.index < b.variant.index; });
  out.stats.rows = out.rows.size();
  out.stats.total_s = seconds_since(t_start);
  return out;
}

}  // namespace lumos::sweep
