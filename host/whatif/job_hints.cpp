// The user's word over the trace's (docs/design.md "Recognising the traced job"): --group roles
// and --traced degrees, and the checks that keep the layout possible.
#include <algorithm>
#include <cctype>

#include "common/error.hpp"
#include "common/format.hpp"
#include "whatif/group_roles.hpp"

namespace lumos::whatif {

namespace {

const char* kWhere = "lumos whatif: ";

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// The trace itself says what the group is and how big: a name it gave and NCCL's group size.
bool stated(const ProcessGroup& g) {
  return (g.role_from == "its description" || g.role_from == "its name") &&
         g.size_from == "NCCL args";
}

const ProcessGroup* sized_group(const JobStructure& js, GroupRole r) {
  for (const auto& g : js.groups)
    if (g.role == r && g.size > 0) return &g;
  return js.group_with(r);
}

// The pipeline stages: the world over the ranks of one stage, when the job has a pipeline.
void stages_from_world(JobStructure& js) {
  const int inner = js.ranks_per_stage();
  if (!js.group_with(GroupRole::kPp)) {
    js.pp = 1, js.pp_from = "no pipeline sends or receives";
  } else if (js.world_size > 0 && js.world_size % inner == 0 && js.world_size / inner >= 2) {
    js.pp = js.world_size / inner;
    js.pp_from = strprintf("world size %d / (tp x dp x cp = %d)", js.world_size, inner);
  } else {
    js.pp = -1;
    js.pp_from = "pipeline sends found, but the world size does not give the stage count";
  }
}

}  // namespace

TracedDegrees parse_traced_degrees(const std::string& text, const std::string& where) {
  TracedDegrees d;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    const size_t eq = item.find('=');
    LUMOS_EXPECT(eq != std::string::npos && eq > 0,
                 where + ": '" + item + "': expected NAME=VALUE (tp=8,pp=1,dp=1,cp=1,mbs=4)");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    LUMOS_EXPECT(
        all_digits(value) && value.size() <= 9 && std::stoll(value) >= 1,
        where + ": " + key + ": expected a whole number of at least 1, got '" + value + "'");
    const int64_t v = std::stoll(value);
    if (key == "tp")
      d.tp = static_cast<int>(v);
    else if (key == "cp")
      d.cp = static_cast<int>(v);
    else if (key == "dp")
      d.dp = static_cast<int>(v);
    else if (key == "pp")
      d.pp = static_cast<int>(v);
    else if (key == "interleave" || key == "vp")
      d.interleave = static_cast<int>(v);
    else if (key == "mbs")
      d.mbs = v;
    else if (key == "gbs")
      d.gbs = v;
    else if (key == "layers")
      d.layers = v;
    else
      throw InputError(where + ": unknown degree '" + key +
                       "' (expected tp, cp, dp, pp, interleave, mbs, gbs or layers)");
  }
  return d;
}

GroupRoleOverride parse_group_override(const std::string& text, const std::string& where) {
  const size_t eq = text.rfind('=');
  LUMOS_EXPECT(eq != std::string::npos && eq > 0,
               where + ": '" + text + "': expected NAME_OR_INDEX=ROLE (3=tp)");
  return {text.substr(0, eq), parse_role(text.substr(eq + 1), where)};
}

void override_roles(JobStructure& js, const std::vector<GroupRoleOverride>& groups) {
  for (const auto& o : groups) {
    ProcessGroup* g = nullptr;
    for (auto& x : js.groups)
      if (x.name == o.group) g = &x;
    if (!g && all_digits(o.group) && o.group.size() < 9 && std::stoul(o.group) < js.groups.size())
      g = &js.groups[std::stoul(o.group)];
    if (!g) {
      std::string known;
      for (size_t i = 0; i < js.groups.size(); ++i)
        known += (i ? ", " : "") + strprintf("#%zu %s", i, js.groups[i].name.c_str());
      throw InputError(std::string(kWhere) + "--group " + o.group +
                       ": the trace has no process group of that name or position (its groups: " +
                       (known.empty() ? "none" : known) + ")");
    }
    if (g->role != o.role)
      js.overridden.push_back(strprintf("group %s: %s (--group), where the trace suggests %s (%s)",
                                        g->name.c_str(), to_string(o.role), to_string(g->role),
                                        g->role_from.c_str()));
    g->role = o.role, g->role_from = "--group";
  }
}

void degrees_from_groups(JobStructure& js) {
  // Without a group of a kind, the job does not split that way: degree 1.
  auto degree_of = [&](GroupRole r, std::string& from) {
    const ProcessGroup* g = sized_group(js, r);
    from = g ? "group " + g->name : "";
    return g ? g->size : 1;
  };
  js.tp = degree_of(GroupRole::kTp, js.tp_from);
  js.cp = degree_of(GroupRole::kCp, js.cp_from);
  js.dp = degree_of(GroupRole::kDp, js.dp_from);
  stages_from_world(js);
}

void apply_traced_degrees(JobStructure& js, const TracedDegrees& given) {
  const int cp = given.cp > 0 ? given.cp : std::max(1, js.cp);
  // The gradient group spans the context-parallel ranks: --traced dp is the data-parallel
  // degree alone (as `lumos estimate --dp`), the gradient group dp x cp.
  const int dp_group = given.dp > 0 ? given.dp * cp : -1;
  struct Degree {
    const char* key;
    int value;
    GroupRole role;
    int* field;
    std::string* from;
    int shown;  // what the user typed
  };
  const Degree degrees[] = {
      {"tp", given.tp, GroupRole::kTp, &js.tp, &js.tp_from, given.tp},
      {"cp", given.cp, GroupRole::kCp, &js.cp, &js.cp_from, given.cp},
      {"dp", dp_group, GroupRole::kDp, &js.dp, &js.dp_from, given.dp},
  };
  bool changed = false;
  for (const Degree& d : degrees) {
    if (d.value <= 0) continue;
    const ProcessGroup* g = sized_group(js, d.role);
    if (g && g->size > 0 && g->size != d.value) {
      LUMOS_EXPECT(
          !stated(*g),
          strprintf("%s--traced %s=%d contradicts the trace: group %s is named for %s (%s) and "
                    "has %d ranks (NCCL args); if the name misleads, give its role with --group "
                    "%s=ROLE",
                    kWhere, d.key, d.shown, g->name.c_str(), to_string(d.role),
                    g->role_from.c_str(), g->size, g->name.c_str()));
      js.overridden.push_back(
          strprintf("%s %d (--traced), where the trace suggests %d (group %s: %s)", d.key, d.shown,
                    *d.field, g->name.c_str(), g->role_from.c_str()));
    } else if (!g && d.value > 1) {
      js.overridden.push_back(strprintf("%s %d (--traced), where the trace shows no %s group",
                                        d.key, d.shown, to_string(d.role)));
    }
    changed |= *d.field != d.value;
    *d.field = d.value, *d.from = "--traced";
  }
  // Stages the trace gave stay: a degree given alone must still fill the world (check_world).
  if (changed && js.pp < 0) stages_from_world(js);
  if (given.pp > 0) {
    if (js.pp > 0 && js.pp != given.pp)
      js.overridden.push_back(strprintf("pp %d (--traced), where the trace suggests %d (%s)",
                                        given.pp, js.pp, js.pp_from.c_str()));
    js.pp = given.pp, js.pp_from = "--traced";
  }
}

void check_world(const JobStructure& js, const JobHints& hints) {
  if (!hints.any() || js.world_size <= 0) return;
  const int inner = js.ranks_per_stage();
  const int cp = std::max(1, js.cp), grad = std::max(1, js.dp);
  const int dp = grad % cp == 0 ? grad / cp : grad;
  const std::string layout = strprintf("tp %d x dp %d x cp %d", std::max(1, js.tp), dp, cp);
  if (js.pp > 0) {
    LUMOS_EXPECT(int64_t{inner} * js.pp == js.world_size,
                 strprintf("%s%s x pp %d = %lld ranks, but the traced job has %d "
                           "(distributedInfo world size): the roles and degrees given make an "
                           "impossible layout",
                           kWhere, layout.c_str(), js.pp,
                           static_cast<long long>(int64_t{inner} * js.pp), js.world_size));
  } else {
    LUMOS_EXPECT(false, strprintf("%s%s = %d ranks per pipeline stage does not divide the traced "
                                  "job's %d ranks (distributedInfo world size)",
                                  kWhere, layout.c_str(), inner, js.world_size));
  }
}

}  // namespace lumos::whatif
