// Recognising the job in a trace: the repeating kernel pattern of the layers, the process groups
// and the parallel degrees, on jobs written by `lumos generate` and on the shared DLRM traces.
#include "whatif/job_structure.hpp"

#include <gtest/gtest.h>

#include "estimate/trace_whatif.hpp"
#include "generated_job.hpp"
#include "graph/load_input.hpp"

using lumos::whatif::find_repeats;
using lumos::whatif::GroupRole;

namespace {

// ids: 100+ are one-off kernels (embedding, head), small ones the layers' kernels.
std::vector<uint32_t> pass(const std::vector<uint32_t>& layer, int layers) {
  std::vector<uint32_t> out;
  for (int i = 0; i < layers; ++i) out.insert(out.end(), layer.begin(), layer.end());
  return out;
}

void append(std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
}

}  // namespace

TEST(FindRepeats, TheLayerIsTheShortestBlockNotTheMicroBatch) {
  const std::vector<uint32_t> fwd = {1, 2, 3, 4, 5}, bwd = {6, 7, 7, 8, 9, 9, 10};
  std::vector<uint32_t> seq = {100};
  for (int mb = 0; mb < 4; ++mb) {  // micro-batches: forward and backward of 3 layers each
    append(seq, pass(fwd, 3));
    seq.push_back(101);
    append(seq, pass(bwd, 3));
  }
  const auto p = find_repeats(seq);
  EXPECT_EQ(p.period, 5u);  // not 5*3+1+7*3 = 37, the micro-batch that also repeats
  EXPECT_EQ(p.repeats, 3u);
  EXPECT_EQ(p.runs, 4u);
  EXPECT_EQ(p.first_kernel, 1u);
}

TEST(FindRepeats, CopiesOfOneKernelAndUnrepeatedSequencesAreNoLayers) {
  EXPECT_EQ(find_repeats(std::vector<uint32_t>(40, 7)).period, 0u);
  std::vector<uint32_t> distinct(100);
  for (uint32_t i = 0; i < 100; ++i) distinct[i] = i;
  EXPECT_EQ(find_repeats(distinct).period, 0u);
  EXPECT_EQ(find_repeats({}).period, 0u);
  // Two layers in a sequence mostly made of something else: too little to be the layers.
  std::vector<uint32_t> mostly = distinct;
  append(mostly, pass({1, 2, 3}, 2));
  EXPECT_EQ(find_repeats(mostly).period, 0u);
}

TEST(RecogniseJob, FindsTheDegreesGroupsAndLayersOfAGeneratedJob) {
  lumos::testing::TempDir tmp;
  lumos::testing::JobConfig c;  // gpt3-15b, 8 layers, tp 2, pp 2, dp 4, 4 micro-batches
  lumos::testing::write_job(c, tmp.file("job"));
  const auto in = lumos::graph::load_job(tmp.file("job"));
  const auto js = lumos::estimate::describe_job(in, lumos::cost::embedded_db());
  EXPECT_EQ(js.world_size, 16);
  EXPECT_EQ(js.tp, 2);
  EXPECT_EQ(js.dp, 4);
  EXPECT_EQ(js.cp, 1);
  EXPECT_EQ(js.pp, 2);
  ASSERT_NE(js.group_with(GroupRole::kPp), nullptr);
  ASSERT_NE(js.group_with(GroupRole::kEmbedding), nullptr);
  EXPECT_EQ(js.forward.repeats, 4u) << "layers per stage";
  EXPECT_EQ(js.forward.runs, 4u) << "micro-batches";
  EXPECT_EQ(js.backward.repeats, 4u);
  EXPECT_EQ(js.backward.runs, 4u);
  EXPECT_GT(js.backward.period, js.forward.period) << "data and weight gradient GEMMs";
  int gemms_with_shapes = 0;
  for (const auto& k : js.forward.kernels) gemms_with_shapes += !k.shape.empty();
  EXPECT_EQ(gemms_with_shapes, 4) << "qkv, attention out, fc1, fc2";
  EXPECT_TRUE(js.missing.empty()) << js.missing.front();
}

TEST(RecogniseJob, FindsTheDataParallelGroupOfTheDlrmTraces) {
  LUMOS_REQUIRE_TRACES();
  const auto in = lumos::graph::load_job(lumos::testing::trace_dir() + "/param/dlrm_kineto");
  const auto js = lumos::estimate::describe_job(in, lumos::cost::embedded_db());
  EXPECT_EQ(js.world_size, 8);
  EXPECT_EQ(js.traced_ranks.size(), 8u);
  ASSERT_EQ(js.groups.size(), 1u);
  EXPECT_EQ(js.groups[0].role, GroupRole::kDp);
  EXPECT_EQ(js.groups[0].size, 8);
  EXPECT_EQ(js.dp, 8);
  EXPECT_EQ(js.pp, 1);
  EXPECT_GT(js.groups[0].ops.at(lumos::trace::CollectiveType::kAllReduce).bytes, 0)
      << "sizes from the nccl:all_reduce annotations";
  // DLRM has no stack of identical layers, and says so.
  EXPECT_EQ(js.forward.period, 0u);
  ASSERT_FALSE(js.missing.empty());
  EXPECT_NE(js.missing[0].find("layers"), std::string::npos);
}
