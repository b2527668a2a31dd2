// Recognises the job in a trace (Lumos §4): its process groups and what each is for (tensor,
// data or pipeline parallel), the parallel degrees they imply, and the layers inside the passes,
// from the repeating kernel pattern of one rank's compute stream. What could not be found is
// listed, so that an edit that needs it can refuse with one line naming it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost/kernel_classifier.hpp"
#include "cost/kernels_db.hpp"
#include "graph/graph.hpp"
#include "trace/classified_kernels.hpp"
#include "trace/event_table.hpp"

namespace lumos::whatif {

enum class GroupRole : uint8_t { kUnknown, kTp, kCp, kDp, kPp, kEmbedding, kAllToAll };
const char* to_string(GroupRole r);

// One collective type of a group, over every traced rank.
struct GroupOps {
  uint32_t kernels = 0;
  double traced_us = 0;
  double bytes = 0;  // summed message sizes where the trace gives them
};

struct ProcessGroup {
  std::string name;       // NCCL "Process Group Name", or "(unnamed)" without NCCL args
  std::string desc;       // "Process Group Description" when the trace has it
  int size = -1;          // ranks in the group, -1 when unknown
  std::string size_from;  // "NCCL args", "distributedInfo world size", "unknown"
  GroupRole role = GroupRole::kUnknown;
  std::string role_from;  // why the role was given
  std::map<trace::CollectiveType, GroupOps> ops;
  std::vector<int32_t> ranks;  // traced ranks that issued its collectives
  // What its collectives carry (whatif/group_roles.hpp), over every traced rank: messages of
  // tokens x a GEMM dimension of the rank that sent them (activations), and messages of another
  // known size (gradient buckets, parameters).
  uint32_t activation_sized = 0, other_sized = 0;
  std::string activation_shape;  // "tokens x dimension" of its first activation
  // Of the other sizes, messages below kSmallMessageElements: a loss, a norm, a found-inf flag,
  // which every group may reduce and which say nothing of its role.
  uint32_t small_sized = 0;
  static constexpr int64_t kSmallMessageElements = 4096;
};

// A kernel of one layer, as the first repetition of the pattern ran it.
struct LayerKernel {
  std::string name, kernel_class;
  double dur_us = 0;
  std::string shape;  // "m x n x k (batch b) dtype" for GEMMs with known shapes, else ""
  std::optional<cost::GemmQuery> gemm;
};

// A block of kernels repeated back to back: the layers of a pass.
struct RepeatPattern {
  uint32_t period = 0;         // kernels per layer; 0 when nothing repeats
  uint32_t runs = 0;           // separate stretches of repetitions (passes of micro-batches)
  uint32_t repeats = 0;        // repetitions in the longest stretch (layers per pass)
  uint32_t instances = 0;      // repetitions over every stretch (layers x passes)
  uint32_t first_repeats = 0;  // repetitions in the first stretch (one pass of one model chunk)
  uint32_t first_kernel = 0;   // position of the first repetition in the sequence
  std::vector<std::pair<uint32_t, uint32_t>> stretches;  // [begin, end) in the sequence
  std::vector<LayerKernel> kernels;
};

struct JobStructure {
  int32_t world_size = -1;  // distributedInfo, -1 when absent
  std::vector<int32_t> traced_ranks;
  std::vector<ProcessGroup> groups;        // by name
  int tp = -1, cp = -1, dp = -1, pp = -1;  // dp: the size of the gradient group (dp x cp)
  std::string pp_from;
  uint32_t p2p_kernels = 0;  // pipeline sends and receives on the described rank
  int32_t described_rank = 0;
  uint32_t compute_kernels = 0;      // on the described rank's compute stream, one step
  RepeatPattern forward, backward;   // by order of first appearance
  std::vector<std::string> missing;  // what could not be found, one line each
  // No sign of a backward pass (autograd operators, backward kernels) or an optimizer step on
  // any traced rank: inference, or a profile of a forward pass.
  bool forward_only = false;
  // Evidence that points two ways (a group's name and its payload), one line each, with what
  // was taken.
  std::vector<std::string> disagreements;
  // What the user said (JobHints) where the trace showed something else, one line each.
  std::vector<std::string> overridden;
  std::string tp_from, cp_from, dp_from;  // the group (or --traced) each degree comes from

  const ProcessGroup* group_with(GroupRole r) const;
  // Ranks of one pipeline stage in Megatron's order: tp x the gradient group (which spans the
  // context-parallel ranks too).
  int ranks_per_stage() const;
};

// The traced job's kernels, classified once: a table and its cost report per traced rank.
struct TracedKernels {
  std::vector<const trace::EventTable*> tables;
  std::vector<int32_t> ranks;  // per table: distributedInfo.rank, else its position (as the
                               // multi-rank graph numbers them)
  std::vector<trace::TraceCostReport> reports;
  // Per table: trace file position (Graph::event) -> its classified kernel.
  std::vector<std::unordered_map<int64_t, const trace::ClassifiedKernel*>> by_event;
  // The table of a graph node's rank (the only table for a single trace), nullptr if none.
  const trace::EventTable* table_of_rank(int32_t rank, size_t* index) const;
  // The classified kernel behind a graph node, nullptr for CPU and synthetic nodes.
  const trace::ClassifiedKernel* kernel_of(const graph::Graph& g, graph::NodeId v,
                                           size_t* table) const;
};
TracedKernels classify_traced(const std::vector<const trace::EventTable*>& tables,
                              const cost::KernelsDb& db);

// What the user says the traced job is (`lumos whatif --traced`, `--group`): it overrides what
// the trace shows. -1: not given.
struct TracedDegrees {
  int tp = -1, cp = -1, dp = -1, pp = -1, interleave = -1;  // dp without cp, as ParallelConfig
  int64_t mbs = -1, gbs = -1;
  int64_t layers = -1;  // transformer layers, where one traced instance holds several
  bool any() const {
    return tp > 0 || cp > 0 || dp > 0 || pp > 0 || interleave > 0 || mbs > 0 || gbs > 0 ||
           layers > 0;
  }
};
struct GroupRoleOverride {
  std::string group;  // a process group's name, else its position in --describe's list
  GroupRole role = GroupRole::kUnknown;
};
struct JobHints {
  TracedDegrees traced;
  std::vector<GroupRoleOverride> groups;
  bool any() const { return traced.any() || !groups.empty(); }
};
// "tp=8,pp=1,dp=1,cp=1,mbs=4,gbs=64,interleave=1,layers=36"; InputError naming `where` and the
// item.
TracedDegrees parse_traced_degrees(const std::string& text, const std::string& where);
// "NAME_OR_INDEX=tp|dp|pp|cp|ep|embedding".
GroupRoleOverride parse_group_override(const std::string& text, const std::string& where);

// Tables: one per traced rank of the same job (one for a single trace). Looks at the first
// ProfilerStep of the lowest rank for the layer pattern (the whole trace when it has no steps).
JobStructure recognise_job(const TracedKernels& tk);
// The same, with the user's word over the trace's. InputError (one line) for a --group that
// names no group, a --traced degree that contradicts a group the trace itself names and sizes
// (a --group role fixes a misleading name), and degrees whose product is not the world size.
// A --traced degree over a degree the trace only suggests wins, with a line in `overridden`.
JobStructure recognise_job(const TracedKernels& tk, const JobHints& hints);

// A group's role from its name, as Megatron, torchtitan and `lumos generate` name groups
// ("tp/stage0", "...tensor...", "dp/...", "pp/...", "embedding/..."); kUnknown otherwise.
GroupRole role_from_name(std::string name);

// The stretches of a sequence that repeat a block of at least 3 kernels back to back, for the
// shortest block that covers at least a third as much of the sequence as the best block and a
// fifth of it (nested repeats: layers inside passes inside micro-batches). Period 0 when nothing
// repeats. Exposed for tests.
RepeatPattern find_repeats(const std::vector<uint32_t>& seq, uint32_t max_period = 4096);

}  // namespace lumos::whatif
