#include "whatif/group_roles.hpp"

#include <algorithm>
#include <cctype>

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos::whatif {

using trace::CollectiveType;

namespace {

std::vector<std::string> words_of(const std::string& name) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      w += static_cast<char>(std::tolower(c));
    } else if (!w.empty()) {
      out.push_back(w), w.clear();
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

bool is_p2p(CollectiveType t) {
  return t == CollectiveType::kSend || t == CollectiveType::kRecv;
}

}  // namespace

// Names as the frameworks give them: Megatron and NeMo describe groups
// (TENSOR_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP_WITH_CP, PIPELINE_MODEL_PARALLEL_GROUP,
// EXPERT_MODEL_PARALLEL_GROUP, EMBEDDING_GROUP), torchtitan's device mesh names them after its
// dimensions (mesh_tp, mesh_dp_shard_cp), vLLM and DeepSpeed use tp, pp, dp, ep and
// *_PARALLEL_GROUP, `lumos generate` tp/stage0. A name with words of two roles is a combined
// group (TENSOR_AND_DATA_PARALLEL_GROUP, MODEL_PARALLEL_GROUP): it says no one role.
GroupRole role_from_name(std::string name) {
  bool tp = false, cp = false, dp = false, pp = false, ep = false, emb = false;
  for (const std::string& w : words_of(name)) {
    tp |= w == "tp" || w == "tensor";
    cp |= w == "cp" || w == "context";
    dp |= w == "dp" || w == "data" || w == "fsdp" || w == "replicate" || w == "shard";
    pp |= w == "pp" || w == "pipeline";
    ep |= w == "ep" || w == "expert" || w == "experts" || w == "moe";
    emb |= w == "embedding" || w == "embd";
  }
  // torchtitan's dp_shard_cp and Megatron's DATA_PARALLEL_GROUP_WITH_CP are the gradient
  // group, which spans the context-parallel ranks.
  if (dp && cp && !tp && !pp && !ep) return GroupRole::kDp;
  const int roles = tp + cp + dp + pp + ep + emb;
  if (roles != 1) return GroupRole::kUnknown;
  if (tp) return GroupRole::kTp;
  if (cp) return GroupRole::kCp;
  if (dp) return GroupRole::kDp;
  if (pp) return GroupRole::kPp;
  if (ep) return GroupRole::kAllToAll;
  return GroupRole::kEmbedding;
}

GroupRole parse_role(const std::string& text, const std::string& where) {
  if (text == "tp") return GroupRole::kTp;
  if (text == "dp" || text == "fsdp") return GroupRole::kDp;
  if (text == "pp") return GroupRole::kPp;
  if (text == "cp") return GroupRole::kCp;
  if (text == "ep") return GroupRole::kAllToAll;
  if (text == "embedding") return GroupRole::kEmbedding;
  throw InputError(where + ": unknown role '" + text +
                   "' (expected tp, dp, pp, cp, ep or embedding)");
}

bool activation_sized(int64_t elements, const std::vector<int64_t>& tokens,
                      const std::vector<int64_t>& dims, std::string* shape) {
  if (elements <= 0) return false;
  for (int64_t t : tokens) {
    if (t <= 1 || elements % t != 0) continue;
    const int64_t d = elements / t;
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
      if (shape)
        *shape = strprintf("%lld x %lld", static_cast<long long>(t), static_cast<long long>(d));
      return true;
    }
  }
  return false;
}

namespace {

// The role the collectives' payload shows, and why; kUnknown when it tells nothing.
std::pair<GroupRole, std::string> role_from_payload(const ProcessGroup& g, const GroupFacts& f) {
  bool p2p = false, dense = false, a2a = false, scatter_gather = false;
  for (const auto& [type, ops] : g.ops) {
    p2p |= is_p2p(type);
    a2a |= type == CollectiveType::kAllToAll;
    dense |= type == CollectiveType::kAllReduce || type == CollectiveType::kReduceScatter ||
             type == CollectiveType::kAllGather;
    scatter_gather |= type == CollectiveType::kReduceScatter || type == CollectiveType::kAllGather;
  }
  if (p2p && !dense) return {GroupRole::kPp, "only sends and receives"};
  if (!dense) {
    if (a2a) return {GroupRole::kAllToAll, "only all-to-all"};
    return {GroupRole::kUnknown, ""};
  }
  // Megatron's tied embeddings: the first and last stage all-reduce the embedding's gradient
  // once per step, two ranks.
  if (f.pipeline && g.size == 2 && g.ops.size() == 1 && g.ops.count(CollectiveType::kAllReduce) &&
      g.activation_sized == 0 && g.ops.at(CollectiveType::kAllReduce).kernels <= g.ranks.size())
    return {GroupRole::kEmbedding,
            "one all-reduce per rank between two ranks of a pipelined job: tied embeddings"};
  if (g.activation_sized > 0 && g.activation_sized >= g.other_sized)
    return {GroupRole::kTp,
            strprintf("%u of its %u messages are activations (tokens x a GEMM dimension, %s)%s",
                      g.activation_sized, g.activation_sized + g.other_sized,
                      g.activation_shape.c_str(),
                      scatter_gather ? ", reduce-scattered and gathered: sequence parallel" : "")};
  if (f.forward_only)
    return {GroupRole::kTp, "reductions in a forward-only job, which has no gradients to reduce"};
  // Megatron's model-parallel group reduces a gradient norm, the data-parallel one a loss too:
  // a group of nothing but such small reductions has no role of its own to show.
  if (g.other_sized > 0 && g.small_sized == g.other_sized)
    return {GroupRole::kUnknown,
            strprintf("only small reductions (%u of fewer than %lld elements: losses, norms, "
                      "flags)",
                      g.small_sized, static_cast<long long>(ProcessGroup::kSmallMessageElements))};
  if (g.other_sized > 0)
    return {GroupRole::kDp,
            strprintf("messages of gradient-bucket size (%u of %u are not tokens x a GEMM "
                      "dimension)",
                      g.other_sized, g.activation_sized + g.other_sized)};
  return {GroupRole::kUnknown, ""};
}

// Where the collectives run, for a group whose payload tells nothing (no message sizes).
std::pair<GroupRole, std::string> role_from_placement(const ProcessGroup& g, const GroupFacts& f) {
  bool dense = false;
  for (const auto& [type, ops] : g.ops)
    dense |= type == CollectiveType::kAllReduce || type == CollectiveType::kReduceScatter ||
             type == CollectiveType::kAllGather;
  if (!dense) {
    if (g.ops.count(CollectiveType::kSendRecv))
      return {GroupRole::kUnknown,
              "only batched sends and receives: pipeline messages or an all-to-all"};
    return {GroupRole::kUnknown, "no collective that tells"};
  }
  if (f.on_gemm_stream) return {GroupRole::kTp, "collectives between GEMMs on the compute stream"};
  if (f.in_passes) return {GroupRole::kTp, "reductions inside the forward and backward passes"};
  return {GroupRole::kDp, "reductions on a stream of their own"};
}

}  // namespace

void assign_role(ProcessGroup& g, const GroupFacts& facts,
                 std::vector<std::string>* disagreements) {
  GroupRole named = GroupRole::kUnknown;
  std::string named_from;
  if (!g.desc.empty() && (named = role_from_name(g.desc)) != GroupRole::kUnknown)
    named_from = "its description";
  else if ((named = role_from_name(g.name)) != GroupRole::kUnknown)
    named_from = "its name";
  const auto [carried, carried_from] = role_from_payload(g, facts);
  if (named != GroupRole::kUnknown) {
    g.role = named, g.role_from = named_from;
    // A tied-embedding or combined group carries what its name does not say: not a conflict.
    if (carried != GroupRole::kUnknown && carried != named && disagreements &&
        named != GroupRole::kEmbedding)
      disagreements->push_back(
          strprintf("group %s: %s says %s, but %s says %s; taken: %s (what the job names it)",
                    g.name.c_str(), named_from.c_str(), to_string(named), carried_from.c_str(),
                    to_string(carried), to_string(named)));
    return;
  }
  if (carried != GroupRole::kUnknown || !carried_from.empty()) {
    g.role = carried, g.role_from = carried_from;
    return;
  }
  const auto [placed, placed_from] = role_from_placement(g, facts);
  g.role = placed, g.role_from = placed_from;
}

}  // namespace lumos::whatif
