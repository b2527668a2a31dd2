// What each process group of a traced job is for, from what its collectives carry rather than
// the stream they run on: generated jobs whose tensor-parallel collectives run on a stream of
// their own under names that say nothing, the shared B200 inference trace, forward-only traces,
// names as the frameworks write them, and evidence that disagrees.
#include "whatif/group_roles.hpp"

#include <gtest/gtest.h>

#include "estimate/trace_whatif.hpp"
#include "generated_job.hpp"
#include "graph/load_input.hpp"
#include "trace/kineto_loader.hpp"

namespace {

using lumos::whatif::GroupRole;
using lumos::whatif::JobStructure;
using lumos::whatif::role_from_name;

struct Layout {
  int tp, pp, dp;
  bool sp;
};

// A llama3-8b job of 4 layers, its TP collectives on their own stream, its groups numbered.
std::string write_numbered_job(const Layout& l, const lumos::testing::TempDir& tmp) {
  lumos::testing::JobConfig c;
  c.model = "llama3-8b";
  c.layers = 4;
  c.tp = l.tp, c.pp = l.pp, c.dp = l.dp, c.gbs = 4 * l.dp;
  lumos::estimate::EstimateRequest r = lumos::testing::job_request(c);
  r.cfg.sequence_parallel = l.sp;
  r.options.tp_comm_stream = true;
  const auto run = lumos::estimate::run_estimate(r, lumos::cost::embedded_db());
  lumos::estimate::StageTraceOptions names;
  names.numbered_groups = true;
  const std::string dir = tmp.file("job");
  lumos::estimate::write_stage_traces(run.step, run.replay, dir, run.estimate.gpu, names);
  return dir;
}

JobStructure recognise(std::vector<lumos::trace::EventTable>& tables) {
  std::vector<const lumos::trace::EventTable*> ptrs;
  for (const auto& t : tables) ptrs.push_back(&t);
  return lumos::whatif::recognise_job(
      lumos::whatif::classify_traced(ptrs, lumos::cost::embedded_db()));
}

std::string b200() {
  return lumos::testing::trace_dir() + "/tracelens/b200_eager_trace.json.gz";
}

}  // namespace

TEST(GroupRoles, EveryGeneratedTpLayoutWithTpOnItsOwnStreamUnderNumberedNames) {
  for (int tp : {2, 4, 8})
    for (int pp : {1, 2})
      for (int dp : {1, 2})
        for (bool sp : {false, true}) {
          SCOPED_TRACE(testing::Message()
                       << "tp " << tp << " pp " << pp << " dp " << dp << (sp ? " sp" : ""));
          lumos::testing::TempDir tmp;
          const auto in = lumos::graph::load_job(write_numbered_job({tp, pp, dp, sp}, tmp));
          // The trace is what it should be: TP collectives off the compute stream (7), groups
          // named by number only.
          bool tp_apart = false;
          for (const auto* t : in.tables())
            for (const auto& e : t->events)
              if (e.collective >= 0 && t->collectives[e.collective].group_size == tp &&
                  e.stream != 7)
                tp_apart = true;
          EXPECT_TRUE(tp_apart);
          const auto js = lumos::estimate::describe_job(in, lumos::cost::embedded_db());
          EXPECT_EQ(js.tp, tp);
          EXPECT_EQ(js.dp, dp);
          EXPECT_EQ(js.pp, pp) << js.pp_from;
          EXPECT_EQ(js.cp, 1);
          EXPECT_FALSE(js.forward_only);
          for (const auto& g : js.groups) {
            EXPECT_EQ(role_from_name(g.name), GroupRole::kUnknown) << g.name;
            if (g.role == GroupRole::kTp)
              EXPECT_NE(g.role_from.find("activations"), std::string::npos) << g.role_from;
            if (g.role == GroupRole::kDp)
              EXPECT_NE(g.role_from.find("gradient-bucket"), std::string::npos) << g.role_from;
          }
          EXPECT_TRUE(js.disagreements.empty());
        }
}

// The shared vLLM trace: rank 0 of 8, MoE forward passes, 36 layers found as a block of two
// (sliding and full attention) repeated 18 times; its one NCCL group gathers the logits.
TEST(GroupRoles, TheB200InferenceTraceIsTensorParallel8WithItsLayers) {
  LUMOS_REQUIRE_TRACES();
  const auto in = lumos::graph::load_job(b200());
  const auto js = lumos::estimate::describe_job(in, lumos::cost::embedded_db());
  EXPECT_EQ(js.tp, 8);
  EXPECT_EQ(js.dp, 1);
  EXPECT_EQ(js.pp, 1);
  EXPECT_TRUE(js.forward_only);
  EXPECT_EQ(js.forward.period, 42u);
  EXPECT_EQ(js.forward.repeats, 18u);
  EXPECT_EQ(js.backward.period, 0u);
  // The layers' all-reduces run over symmetric memory (no NCCL args), sized by the operator
  // that launched them: activations of 888 tokens x the hidden size, two per layer.
  ASSERT_EQ(js.groups.size(), 2u);
  const auto& symm = js.groups[0];
  EXPECT_EQ(symm.name, "(symmetric memory)");
  EXPECT_EQ(symm.role, GroupRole::kTp);
  EXPECT_EQ(symm.size, 8);
  EXPECT_EQ(symm.ops.at(lumos::trace::CollectiveType::kAllReduce).kernels, 73u);
  EXPECT_EQ(symm.activation_shape, "888 x 2880");
  EXPECT_EQ(js.groups[1].name, "3");
  EXPECT_EQ(js.groups[1].role, GroupRole::kTp);
}

// A forward-only job has no gradients to reduce: its collectives are tensor parallel wherever
// they run. The B200 trace with its NCCL kernel moved to a stream of its own (as Megatron's
// forward passes run their TP all-reduces) read "data parallel" by the stream rule.
TEST(GroupRoles, AForwardOnlyTracesCollectivesOnTheirOwnStreamAreNotDataParallel) {
  LUMOS_REQUIRE_TRACES();
  std::vector<lumos::trace::EventTable> tables;
  tables.push_back(lumos::trace::load_trace(b200()));
  int moved = 0;
  for (auto& e : tables[0].events)
    if (e.collective >= 0 && e.is_gpu_op()) e.stream = 99, ++moved;
  ASSERT_GE(moved, 1);
  const JobStructure js = recognise(tables);
  EXPECT_TRUE(js.forward_only);
  EXPECT_EQ(js.tp, 8);
  EXPECT_EQ(js.dp, 1);
  EXPECT_EQ(js.group_with(GroupRole::kDp), nullptr);
  ASSERT_EQ(js.groups.size(), 2u);
  EXPECT_EQ(js.groups[1].name, "3");
  EXPECT_EQ(js.groups[1].role, GroupRole::kTp);
  EXPECT_NE(js.groups[1].role_from.find("forward-only"), std::string::npos);
}

// Names as Megatron/NeMo describe groups, torchtitan's device mesh, vLLM, DeepSpeed and `lumos
// generate` name them; combined groups name no one role.
TEST(GroupRoles, NamesOfTheFrameworks) {
  const std::pair<const char*, GroupRole> cases[] = {
      {"TENSOR_MODEL_PARALLEL_GROUP", GroupRole::kTp},
      {"DATA_PARALLEL_GROUP", GroupRole::kDp},
      {"DATA_PARALLEL_GROUP_WITH_CP", GroupRole::kDp},
      {"PIPELINE_MODEL_PARALLEL_GROUP", GroupRole::kPp},
      {"CONTEXT_PARALLEL_GROUP", GroupRole::kCp},
      {"EMBEDDING_GROUP", GroupRole::kEmbedding},
      {"EXPERT_MODEL_PARALLEL_GROUP", GroupRole::kAllToAll},
      {"mesh_tp", GroupRole::kTp},
      {"mesh_dp_shard_cp", GroupRole::kDp},
      {"mesh_dp_replicate", GroupRole::kDp},
      {"mesh_pp", GroupRole::kPp},
      {"mesh_cp", GroupRole::kCp},
      {"ep", GroupRole::kAllToAll},
      {"tp/stage0", GroupRole::kTp},
      {"pp/stage0-1", GroupRole::kPp},
      {"_DATA_PARALLEL_GROUP", GroupRole::kDp},
      {"TENSOR_AND_DATA_PARALLEL_GROUP", GroupRole::kUnknown},
      {"MODEL_PARALLEL_GROUP", GroupRole::kUnknown},
      {"default_pg", GroupRole::kUnknown},
      {"undefined", GroupRole::kUnknown},
      {"3", GroupRole::kUnknown},
  };
  for (const auto& [name, role] : cases)
    EXPECT_EQ(role_from_name(name), role) << name << ": " << lumos::whatif::to_string(role);
}

// A group named for data parallelism whose messages are activations: both pieces of evidence
// named on one line, the name taken.
TEST(GroupRoles, ANameThatDisagreesWithThePayloadIsSaid) {
  lumos::testing::TempDir tmp;
  lumos::testing::JobConfig c;
  c.model = "llama3-8b", c.layers = 4, c.tp = 4, c.pp = 1, c.dp = 2, c.gbs = 8;
  lumos::testing::write_job(c, tmp.file("job"));
  auto tables = lumos::graph::load_job(tmp.file("job")).rank_tables;
  int renamed = 0;
  for (auto& t : tables)
    for (auto& ci : t.collectives)
      if (ci.process_group == "tp/stage0") ci.process_group = "data_parallel_x", ++renamed;
  ASSERT_GT(renamed, 0);
  const JobStructure js = recognise(tables);
  ASSERT_EQ(js.disagreements.size(), 1u);
  const std::string& line = js.disagreements[0];
  EXPECT_NE(line.find("data_parallel_x"), std::string::npos) << line;
  EXPECT_NE(line.find("its name says data parallel"), std::string::npos) << line;
  EXPECT_NE(line.find("activations"), std::string::npos) << line;
  EXPECT_NE(line.find("tensor parallel"), std::string::npos) << line;
}

TEST(GroupRoles, ActivationSizeIsTokensTimesAGemmDimension) {
  std::string shape;
  EXPECT_TRUE(lumos::whatif::activation_sized(888 * 2880, {888}, {640, 2880, 512}, &shape));
  EXPECT_EQ(shape, "888 x 2880");
  EXPECT_FALSE(lumos::whatif::activation_sized(888 * 2880 + 8, {888}, {2880}, nullptr));
  EXPECT_FALSE(lumos::whatif::activation_sized(888 * 7, {888}, {2880}, nullptr));
  EXPECT_FALSE(lumos::whatif::activation_sized(2880, {1}, {2880}, nullptr)) << "one token";
}

// A group that only reduces a few elements (Megatron's model-parallel group and its gradient
// norm) is no data-parallel group, whatever stream it runs on.
TEST(GroupRoles, SmallReductionsSayNothingOfTheRole) {
  lumos::testing::TempDir tmp;
  auto tables = lumos::graph::load_job(write_numbered_job({4, 1, 2, false}, tmp)).rank_tables;
  ASSERT_EQ(recognise(tables).dp, 2);
  int shrunk = 0;
  for (auto& t : tables)
    for (auto& ci : t.collectives)
      if (ci.group_size == 2) ci.in_nelems = ci.out_nelems = 1, ++shrunk;
  ASSERT_GT(shrunk, 0);
  const JobStructure js = recognise(tables);
  EXPECT_EQ(js.dp, 1);
  EXPECT_EQ(js.tp, 4);
  EXPECT_EQ(js.group_with(GroupRole::kDp), nullptr);
  bool said = false;
  for (const auto& g : js.groups)
    said |= g.role == GroupRole::kUnknown &&
            g.role_from.find("only small reductions") != std::string::npos;
  EXPECT_TRUE(said);
  ASSERT_FALSE(js.missing.empty());
  EXPECT_NE(js.missing.back().find("layout: the groups found make 4 of the world's 8 ranks"),
            std::string::npos)
      << js.missing.back();
}

// distributedInfo.pg_config names groups whose kernels do not (their description "undefined"):
// read from the B200 trace, and used for the role.
TEST(GroupRoles, PgConfigDescriptionsNameTheGroups) {
  LUMOS_REQUIRE_TRACES();
  const auto b = lumos::trace::load_trace(b200());
  ASSERT_EQ(b.pg_config.size(), 15u);
  EXPECT_EQ(b.pg_config[0].name, "0");
  EXPECT_EQ(b.pg_config[0].desc, "default_pg");
  EXPECT_EQ(b.pg_config[0].size, 8);
  lumos::testing::TempDir tmp;
  auto tables = lumos::graph::load_job(write_numbered_job({4, 1, 2, false}, tmp)).rank_tables;
  std::string tp_group;
  for (const auto& g : recognise(tables).groups)
    if (g.role == GroupRole::kTp) tp_group = g.name;
  ASSERT_FALSE(tp_group.empty());
  // The job says its TP group is the data-parallel one: the name wins, and the payload is said.
  for (auto& t : tables) t.pg_config.push_back({tp_group, "DATA_PARALLEL_GROUP", 4});
  const JobStructure js = recognise(tables);
  for (const auto& g : js.groups)
    if (g.name == tp_group) {
      EXPECT_EQ(g.desc, "DATA_PARALLEL_GROUP");
      EXPECT_EQ(g.role, GroupRole::kDp);
      EXPECT_EQ(g.role_from, "its description");
    }
  ASSERT_EQ(js.disagreements.size(), 1u);
  EXPECT_NE(js.disagreements[0].find("its description says data parallel"), std::string::npos)
      << js.disagreements[0];
}
