// What each process group of a traced job is for (docs/design.md "Recognising the traced job"),
// from three kinds of evidence, most specific first: what the trace names the group (its
// description or name, in the words of Megatron, NeMo, torchtitan, DeepSpeed, vLLM or `lumos
// generate`), what its collectives carry (activations of tokens x a GEMM dimension inside the
// layers are tensor parallel; other sizes, gradient buckets, are data parallel; sends and
// receives are pipeline parallel; a forward-only job has no gradients to reduce), and only when
// neither tells, where they run (between the compute stream's GEMMs, inside both passes). The
// user's word (--group, --traced) overrides all of it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "whatif/job_structure.hpp"

namespace lumos::whatif {

// What one group's collectives showed, over every traced rank.
struct GroupFacts {
  bool on_gemm_stream = false;  // issued on a stream that also runs GEMMs
  bool in_passes = false;       // reduced inside the described rank's forward and backward layers
  bool forward_only = false;    // the job runs no backward pass (JobStructure::forward_only)
  bool pipeline = false;        // the job sends pipeline messages
};

// Sets g.role and g.role_from from the evidence; a line into `disagreements` when the name and
// the payload point at different roles (the name is taken: it is what the job says).
void assign_role(ProcessGroup& g, const GroupFacts& facts, std::vector<std::string>* disagreements);

// "tp", "dp" (or "fsdp"), "pp", "cp", "ep", "embedding"; InputError naming `where` otherwise.
GroupRole parse_role(const std::string& text, const std::string& where);

// Whether a message of `elements` is an activation of a rank whose layer GEMMs multiply
// `tokens` rows into the `dims` columns: tokens x one of the dims. `*shape` gets "t x d".
bool activation_sized(int64_t elements, const std::vector<int64_t>& tokens,
                      const std::vector<int64_t>& dims, std::string* shape);

// The steps of recognise_job after each group's role (whatif/job_hints.cpp): the user's roles
// (--group), the degrees the groups give (the pipeline stages from the world size), the user's
// degrees (--traced), and the layout against the world size. InputError as recognise_job.
void override_roles(JobStructure& js, const std::vector<GroupRoleOverride>& groups);
void degrees_from_groups(JobStructure& js);
void apply_traced_degrees(JobStructure& js, const TracedDegrees& given);
void check_world(const JobStructure& js, const JobHints& hints);

}  // namespace lumos::whatif
