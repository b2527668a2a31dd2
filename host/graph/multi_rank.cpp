#include "graph/multi_rank.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "graph/flatten.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/runtime_names.hpp"

namespace lumos::graph {
namespace {

// Measured (start, end) of each comm kernel of a table, in issue order (GPU start time).
std::vector<std::pair<int64_t, int64_t>> comm_kernels(const trace::EventTable& t) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& e : t.events)
    if (e.kind == trace::EventKind::kKernel && trace::is_comm_kernel(t.name_of(e)))
      out.push_back({e.ts_ns, e.end_ns()});
  std::sort(out.begin(), out.end());
  return out;
}

// End time of each comm kernel with NCCL args, by (process group, sequence number).
std::map<std::pair<std::string, int64_t>, int64_t> keyed_comm_ends(const trace::EventTable& t) {
  std::map<std::pair<std::string, int64_t>, int64_t> out;
  for (const auto& e : t.events)
    if (e.kind == trace::EventKind::kKernel && e.collective >= 0) {
      const auto& c = t.collectives[static_cast<size_t>(e.collective)];
      if (!c.process_group.empty() && c.seq >= 0) out[{c.process_group, c.seq}] = e.end_ns();
    }
  return out;
}

// "1, 3, 5" for at most `shown` ranks of a sorted list, then "and N more".
std::string rank_list(const std::vector<int64_t>& ranks, size_t total) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (total > ranks.size()) s += " and " + std::to_string(total - ranks.size()) + " more";
  return s;
}

// A folder replays as one job only when its traces agree on the job and hold all of its ranks
// (a missing trace would replay a smaller job with no sign of it).
void check_one_job(const std::vector<trace::EventTable>& tables, const std::string& dir,
                   bool allow_partial, std::vector<std::string>* warnings) {
  const trace::EventTable* first = nullptr;  // the first trace declaring a world size
  for (const auto& t : tables)
    if (t.world_size > 0) {
      first = &t;
      break;
    }
  if (!first) return;  // no trace names its job: the ranks present are the job
  const int64_t world = first->world_size;
  for (const auto& t : tables) {
    LUMOS_EXPECT(t.world_size > 0, dir + ": traces of different jobs: " + first->path +
                                       " declares world size " + std::to_string(world) + ", " +
                                       t.path + " none (distributedInfo.world_size)");
    LUMOS_EXPECT(t.world_size == world, dir + ": traces of different jobs: " + first->path +
                                            " declares world size " + std::to_string(world) + ", " +
                                            t.path + " " + std::to_string(t.world_size));
    LUMOS_EXPECT(t.traced_ranks == first->traced_ranks,
                 dir + ": traces of different jobs: " + first->path + " and " + t.path +
                     " list different traced ranks (distributedInfo.lumos_traced_ranks)");
  }
  std::set<int64_t> present;
  for (size_t i = 0; i < tables.size(); ++i) {
    const int64_t rank = tables[i].rank >= 0 ? tables[i].rank : static_cast<int64_t>(i);
    LUMOS_EXPECT(rank < world, tables[i].path + ": rank " + std::to_string(rank) +
                                   " is outside the declared world size " + std::to_string(world));
    present.insert(rank);
  }
  if (present.size() < tables.size()) return;  // two traces of one rank: build_multi_rank says so
  // Expected: the traced ranks the writer declared, else every rank of the world.
  const auto& traced = first->traced_ranks;
  std::vector<int64_t> missing;
  size_t missing_count = 0;
  const size_t shown = 16;
  if (!traced.empty()) {
    const std::set<int64_t> expected(traced.begin(), traced.end());
    for (int64_t r : expected) {
      LUMOS_EXPECT(r < world, first->path + ": traced rank " + std::to_string(r) +
                                  " is outside the declared world size " + std::to_string(world));
      if (present.count(r)) continue;
      ++missing_count;
      if (missing.size() < shown) missing.push_back(r);
    }
    for (int64_t r : present)
      LUMOS_EXPECT(expected.count(r), dir + ": a trace of rank " + std::to_string(r) +
                                          ", which is not among the ranks the traces list "
                                          "(distributedInfo.lumos_traced_ranks)");
  } else {
    missing_count = static_cast<size_t>(world) - present.size();  // present ranks are < world
    for (int64_t r = 0; r < world && missing.size() < std::min(shown, missing_count); ++r)
      if (!present.count(r)) missing.push_back(r);
  }
  if (missing_count == 0) return;
  const std::string what = dir + ": " + (missing_count == 1 ? "rank " : "ranks ") +
                           rank_list(missing, missing_count) + " of world size " +
                           std::to_string(world) + (missing_count == 1 ? " has" : " have") +
                           " no trace";
  LUMOS_EXPECT(allow_partial, what + " (--allow-partial replays the ranks present)");
  warnings->push_back(what + "; replaying the " + std::to_string(present.size()) +
                      " ranks present");
}

bool all_keyed(const trace::EventTable& t) {
  bool keyed = !t.collectives.empty();
  for (const auto& c : t.collectives) keyed = keyed && !c.process_group.empty() && c.seq >= 0;
  return keyed;
}

// Ranks: distributedInfo.rank, else the input position; two inputs of one rank are an error.
void assign_ranks(const std::vector<trace::EventTable>& tables, MultiRankResult* out) {
  const size_t R = tables.size();
  for (size_t r = 0; r < R; ++r)
    out->ranks.push_back(tables[r].rank >= 0 ? tables[r].rank : static_cast<int32_t>(r));
  for (size_t r = 0; r < R; ++r) out->paths.push_back(tables[r].path);
  for (size_t r = 0; r < R; ++r)
    for (size_t q = 0; q < r; ++q)
      LUMOS_EXPECT(out->ranks[q] != out->ranks[r],
                   "multi-rank: " + tables[q].path + " and " + tables[r].path + " are both rank " +
                       std::to_string(out->ranks[r]) +
                       " (distributedInfo.rank, or the file's position when absent)");
}

// Aligns every rank's clock on rank 0's, shifting its events in place: NCCL kernels of one
// collective end within microseconds on every rank.
void align_clocks(std::vector<trace::EventTable>& tables, MultiRankResult* out) {
  const size_t R = tables.size();
  const auto ref = comm_kernels(tables[0]);
  // Keyed ranks' collective ends by (group, sequence), on their own clocks.
  std::vector<std::map<std::pair<std::string, int64_t>, int64_t>> keys(R);
  std::vector<bool> keyed(R);
  for (size_t r = 0; r < R; ++r) {
    keyed[r] = all_keyed(tables[r]);
    if (keyed[r]) keys[r] = keyed_comm_ends(tables[r]);
  }
  const bool ref_keyed = keyed[0];
  std::vector<int64_t> shift_ns_of(R, 0);
  out->clock_shift_us.assign(R, 0.0);
  for (size_t r = 1; r < R; ++r) {
    const auto mine = comm_kernels(tables[r]);
    // With NCCL args on both sides, align on the kernels the ranks share by (group, sequence):
    // process groups that span some ranks only (pipeline stages) give ranks different kernels,
    // so order alone would pair different collectives. On rank 0's, else on the first aligned
    // rank that shares some (stage s meets stage s - 1 only); none shared: clocks taken as one.
    if (mine.size() != ref.size() && keyed[r] && !ref_keyed) continue;
    if (ref_keyed && keyed[r]) {
      std::vector<double> d;
      for (size_t q = 0; q < r && d.empty(); ++q) {
        if (!keyed[q]) continue;
        for (const auto& [key, end] : keys[r]) {
          auto it = keys[q].find(key);
          if (it != keys[q].end())
            d.push_back(static_cast<double>(it->second + shift_ns_of[q] - end));
        }
      }
      const auto shift_ns = static_cast<int64_t>(median(d));
      shift_ns_of[r] = shift_ns;
      out->clock_shift_us[r] = static_cast<double>(shift_ns) / 1000.0;
      for (auto& e : tables[r].events) e.ts_ns += shift_ns;
      continue;
    }
    LUMOS_EXPECT(mine.size() == ref.size(),
                 "multi-rank: " + tables[r].path + " issued " + std::to_string(mine.size()) +
                     " NCCL kernels but " + tables[0].path + " issued " +
                     std::to_string(ref.size()) + " (expected the same collectives on every rank)");
    std::vector<double> d;
    for (size_t k = 0; k < ref.size(); ++k)
      d.push_back(static_cast<double>(ref[k].second - mine[k].second));
    const auto shift_ns = static_cast<int64_t>(median(d));
    out->clock_shift_us[r] = static_cast<double>(shift_ns) / 1000.0;
    for (auto& e : tables[r].events) e.ts_ns += shift_ns;
  }
}

// The per-rank graphs merged into one draft over a common origin (the earliest rank's t0).
struct MergedDraft {
  std::vector<BuildResult> per;  // each rank's own graph
  int64_t t0 = std::numeric_limits<int64_t>::max();
  Draft d;
  std::vector<std::string> names;
  std::map<std::string, uint32_t> name_id;
  std::vector<Resource> resources;
  std::vector<Step> steps;
  std::vector<std::vector<uint32_t>> draft_of;  // rank graph node -> draft node

  uint32_t intern(const std::string& s) {
    auto it = name_id.find(s);
    if (it != name_id.end()) return it->second;
    names.push_back(s);
    return name_id[s] = static_cast<uint32_t>(names.size() - 1);
  }
};

// Copies rank r's graph into the draft: its resources, nodes (shifted to the common origin),
// edges and steps, each tagged with the rank.
void append_rank(MergedDraft& m, size_t r, int32_t rank) {
  const Graph& g = m.per[r].graph;
  const double offset_us = static_cast<double>(g.t0_ns - m.t0) / 1000.0;
  const uint32_t res_base = static_cast<uint32_t>(m.resources.size());
  const int32_t step_base = static_cast<int32_t>(m.steps.size());
  for (Resource res : g.resources) {
    res.rank = rank;
    m.resources.push_back(res);
  }
  auto& map = m.draft_of[r];
  map.assign(g.num_nodes(), 0);
  for (NodeId v = 1; v < g.num_nodes(); ++v) {
    DraftNode dn;
    dn.kind = g.kind[v];
    dn.cls = g.cls[v];
    dn.resource = g.resource[v] == kNoResource ? kNoResource : res_base + g.resource[v];
    dn.step = g.step[v] >= 0 ? step_base + g.step[v] : -1;
    dn.name = m.intern(g.names[g.name[v]]);
    dn.event = g.event[v];
    dn.start_us = g.measured_start_us[v] + offset_us;
    dn.dur_us = g.dur_us[v];
    map[v] = static_cast<uint32_t>(m.d.nodes.size());
    m.d.nodes.push_back(dn);
  }
  for (NodeId v = 1; v < g.num_nodes(); ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const NodeId p = g.pred_index[e];
      const double lag = p == kOrigin ? g.pred_lag_us[e] + offset_us : g.pred_lag_us[e];
      m.d.edges.push_back({p == kOrigin ? 0u : map[p], map[v], g.pred_kind[e], lag});
    }
  for (Step s : g.steps) {
    s.rank = rank;
    s.marker = s.marker == kOrigin ? kOrigin : map[s.marker];
    m.steps.push_back(s);
  }
}

void merge_ranks(const std::vector<trace::EventTable>& tables, const BuildOptions& opt,
                 const std::vector<int32_t>& ranks, MergedDraft* m) {
  for (const auto& t : tables) {
    m->per.push_back(build_graph(t, opt));
    m->t0 = std::min(m->t0, m->per.back().graph.t0_ns);
  }
  m->d.nodes.push_back({});
  m->draft_of.resize(tables.size());
  for (size_t r = 0; r < tables.size(); ++r) append_rank(*m, r, ranks[r]);
}

using CollectiveKey = std::pair<std::string, int64_t>;  // (process group, sequence number)

// Each collective instance's members: (rank idx, draft node) by key, keys in order of first sight.
struct CollectiveMembers {
  std::map<CollectiveKey, std::vector<std::pair<size_t, uint32_t>>> by_key;
  std::vector<CollectiveKey> key_order;
};

// Kernels with NCCL args (process group and sequence number) meet by (group, sequence); the
// others by their order of issue among such kernels.
CollectiveMembers collective_members(const std::vector<trace::EventTable>& tables,
                                     const MergedDraft& m) {
  CollectiveMembers out;
  for (size_t r = 0; r < tables.size(); ++r) {
    const Graph& g = m.per[r].graph;
    std::map<int64_t, const trace::Event*> by_index;
    for (const auto& e : tables[r].events) by_index[e.index] = &e;
    std::vector<uint32_t> comm;
    for (NodeId v = 1; v < g.num_nodes(); ++v)
      if (g.cls[v] == NodeClass::kComm && g.kind[v] == NodeKind::kKernel) comm.push_back(v);
    std::sort(comm.begin(), comm.end(), [&](uint32_t a, uint32_t b) {
      return g.measured_start_us[a] < g.measured_start_us[b];
    });
    int64_t order = 0;
    for (uint32_t v : comm) {
      CollectiveKey key{"", 0};
      auto it = by_index.find(g.event[v]);
      const trace::Event* e = it == by_index.end() ? nullptr : it->second;
      if (e && e->collective >= 0 && !tables[r].collectives[e->collective].process_group.empty() &&
          tables[r].collectives[e->collective].seq >= 0)
        key = {tables[r].collectives[e->collective].process_group,
               tables[r].collectives[e->collective].seq};
      else
        key = {"", order++};
      auto& members = out.by_key[key];
      if (members.empty()) out.key_order.push_back(key);
      members.push_back({r, m.draft_of[r][v]});
    }
  }
  return out;
}

// One rendezvous per collective instance with two or more members: each member's kernel becomes
// its arrival (no duration) and a transfer that starts at the last arrival. Returns each
// instance's transfer nodes; edges out of a moved kernel now leave from its transfer.
std::vector<std::vector<uint32_t>> add_rendezvous(const CollectiveMembers& cm, MergedDraft& m,
                                                  MultiRankResult* out) {
  Draft& d = m.d;
  std::vector<uint32_t> moved_to(d.nodes.size(), 0);
  std::vector<std::vector<uint32_t>> instance_transfers;
  for (const auto& key : cm.key_order) {
    const auto& members = cm.by_key.at(key);
    if (members.size() < 2) continue;  // nobody to meet (a peer's trace is missing it)
    CollectiveInstance ci;
    ci.name = m.names[d.nodes[members[0].second].name];
    double last = -1e300;
    for (const auto& [r, a] : members) last = std::max(last, d.nodes[a].start_us);
    const uint32_t rdv = static_cast<uint32_t>(d.nodes.size());
    DraftNode rn;
    rn.kind = NodeKind::kVirtual;
    rn.cls = NodeClass::kVirtual;
    rn.name = m.intern("rendezvous " + ci.name);
    rn.start_us = last;
    d.nodes.push_back(rn);
    std::vector<uint32_t> transfers;
    std::vector<size_t> ranks_in;
    for (const auto& [r, a] : members) {
      DraftNode t = d.nodes[a];
      const double end = t.start_us + t.dur_us;
      t.start_us = last;
      t.dur_us = std::max(0.0, end - last);
      ci.wait_us.push_back(last - d.nodes[a].start_us);
      ci.transfer_us.push_back(t.dur_us);
      d.nodes[a].dur_us = 0;  // the arrival
      const uint32_t tid = static_cast<uint32_t>(d.nodes.size());
      d.nodes.push_back(t);
      moved_to.resize(d.nodes.size(), 0);
      moved_to[a] = tid;
      d.edges.push_back({a, rdv, EdgeKind::kCrossRank, 0.0});
      d.edges.push_back({rdv, tid, EdgeKind::kCrossRank, 0.0});
      transfers.push_back(tid);
      ranks_in.push_back(r);
      ci.arrive.push_back(a);
    }
    ci.rendezvous = rdv;
    ci.rank_index = ranks_in;
    instance_transfers.push_back(transfers);
    out->collectives.push_back(std::move(ci));
  }
  for (auto& e : d.edges)
    if (e.kind != EdgeKind::kCrossRank && e.src < moved_to.size() && moved_to[e.src] != 0)
      e.src = moved_to[e.src];
  return instance_transfers;
}

// Flattens the draft into out->graph and remaps the steps' and collectives' draft node ids.
void flatten_merged(MergedDraft& m, const std::vector<std::vector<uint32_t>>& instance_transfers,
                    const std::string& source, MultiRankResult* out) {
  std::vector<NodeId> id;
  const Draft& d = m.d;
  out->graph = flatten(
      d, &id, [&](uint32_t n) { return "node '" + m.names[d.nodes[n].name] + "'"; },
      "multi-rank graph");
  Graph& g = out->graph;
  g.resources = std::move(m.resources);
  g.names = std::move(m.names);
  g.steps = std::move(m.steps);
  for (auto& s : g.steps) s.marker = id[s.marker];
  g.t0_ns = m.t0;
  g.rank = -1;
  g.source = source;
  for (size_t k = 0; k < out->collectives.size(); ++k) {
    auto& ci = out->collectives[k];
    for (auto& a : ci.arrive) a = id[a];
    ci.rendezvous = id[ci.rendezvous];
    for (uint32_t t : instance_transfers[k]) ci.transfer.push_back(id[t]);
  }
}

}  // namespace

MultiRankResult build_multi_rank(std::vector<trace::EventTable> tables, const BuildOptions& opt) {
  LUMOS_EXPECT(!tables.empty(), "multi-rank: no traces");
  MultiRankResult out;
  const size_t R = tables.size();
  assign_ranks(tables, &out);
  // 1. Align clocks.
  align_clocks(tables, &out);
  // 2. Per-rank graphs, merged into one draft over a common origin.
  MergedDraft m;
  merge_ranks(tables, opt, out.ranks, &m);
  // 3. Rendezvous per collective instance.
  const CollectiveMembers members = collective_members(tables, m);
  const auto instance_transfers = add_rendezvous(members, m, &out);
  // 4. Flatten and remap the collective bookkeeping.
  flatten_merged(m, instance_transfers, tables[0].path + " (+" + std::to_string(R - 1) + " ranks)",
                 &out);
  return out;
}

MultiRankResult load_multi_rank(const std::string& dir, bool allow_partial,
                                std::vector<trace::EventTable>* tables_out) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  LUMOS_EXPECT(!ec, dir + ": cannot read the folder (" + ec.message() + ")");
  auto ends_with = [](const std::string& p, const std::string& suffix) {
    return p.size() >= suffix.size() &&
           p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  std::vector<std::string> skipped;  // rank files that cannot be read, one line each
  for (const auto& e : it) {
    const std::string p = e.path().string();
    if (!ends_with(p, ".json") && !ends_with(p, ".json.gz")) continue;
    struct stat st = {};
    struct stat lst = {};
    if (::stat(p.c_str(), &st) != 0) {
      const int err = errno;
      const bool link = ::lstat(p.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
      skipped.push_back(p + (link && err == ENOENT
                                 ? ": a broken link (its target does not exist)"
                                 : ": cannot be read: " + std::string(std::strerror(err))));
    } else if (!S_ISREG(st.st_mode)) {
      skipped.push_back(p + ": not a regular file");
    } else {
      files.push_back(p);
    }
  }
  std::sort(skipped.begin(), skipped.end());
  LUMOS_EXPECT(skipped.empty() || allow_partial,
               skipped.front() +
                   (skipped.size() > 1 ? " (and " + std::to_string(skipped.size() - 1) +
                                             " more unreadable rank files)"
                                       : "") +
                   "; --allow-partial replays the other ranks");
  std::sort(files.begin(), files.end());
  LUMOS_EXPECT(!files.empty(), dir + ": no *.json or *.json.gz traces in the folder");
  std::vector<trace::EventTable> tables;
  std::vector<std::string> warnings;
  // Files that are not Kineto traces (execution traces beside them, other JSON) are no rank's:
  // skipped with a line each, whatever allow_partial says.
  for (const auto& f : files) {
    try {
      tables.push_back(trace::load_trace(f));
    } catch (const trace::NotKinetoTrace& e) {
      warnings.push_back(std::string(e.what()) + "; skipped");
    }
  }
  LUMOS_EXPECT(!tables.empty(), dir + ": no Kineto traces in the folder (" +
                                    std::to_string(files.size()) +
                                    " JSON files, none with 'traceEvents')");
  for (const auto& s : skipped) warnings.push_back(s + "; skipped");
  check_one_job(tables, dir, allow_partial, &warnings);
  if (tables_out) *tables_out = tables;
  MultiRankResult out = build_multi_rank(std::move(tables));
  out.warnings = std::move(warnings);
  return out;
}

}  // namespace lumos::graph
