// Overriding a preset's fields: a multi-head model stays multi-head when its head count changes;
// a GQA model keeps its KV heads, and says to give them when they no longer divide; the head
// dimension follows hidden / heads (Megatron's kv_channels default) where that is whole, unless
// it is given.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "model/model_spec.hpp"

namespace {

using lumos::model::apply_overrides;
using lumos::model::preset;

TEST(ModelOverride, MultiHeadPresetGivenNewHeadsStaysMultiHead) {
  auto m = preset("gpt3-15b");  // 48 heads, 48 KV heads
  apply_overrides(&m, {{"heads", "64", "--heads"}, {"head_dim", "96", "--head-dim"}});
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 64);
  EXPECT_EQ(m.head_dim, 96);
}

TEST(ModelOverride, ExplicitKvHeadsWin) {
  auto m = preset("gpt3-15b");
  apply_overrides(&m, {{"kv_heads", "8", "--kv-heads"}, {"heads", "64", "--heads"}});
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 8);
}

TEST(ModelOverride, GqaPresetKeepsItsKvHeadsOrAsksForThem) {
  auto m = preset("llama3-8b");  // 32 heads, 8 KV heads
  apply_overrides(&m, {{"heads", "64", "--heads"}});
  EXPECT_EQ(m.kv_heads, 8);
  auto bad = preset("llama3-8b");
  try {
    apply_overrides(&bad, {{"heads", "36", "--heads"}});
    FAIL() << "36 heads over 8 KV heads should be refused";
  } catch (const lumos::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--heads"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kv_heads"), std::string::npos) << e.what();
  }
}

// Nemotron-4 340B described over the GPT-3 175B preset (12288 = 96 x 128): 96 heads of 192.
TEST(ModelOverride, HeadDimFollowsHiddenOverHeadsUnlessGiven) {
  auto m = preset("gpt3-175b");
  ASSERT_EQ(m.head_dim * m.heads, m.hidden);
  apply_overrides(&m, {{"hidden", "18432", "--hidden"}, {"kv_heads", "8", "--kv-heads"}});
  EXPECT_EQ(m.head_dim, 192);
  EXPECT_EQ(m.q_size(), m.hidden);
  EXPECT_EQ(m.kv_size(), 8 * 192);
  auto given = preset("gpt3-175b");
  apply_overrides(&given, {{"hidden", "18432", "--hidden"}, {"head_dim", "128", "--head-dim"}});
  EXPECT_EQ(given.head_dim, 128);
  auto heads = preset("llama3-8b");  // 4096 = 32 x 128
  apply_overrides(&heads, {{"heads", "64", "--heads"}});
  EXPECT_EQ(heads.head_dim, 64);
  auto odd = preset("llama3-8b");  // 4096 over 48 heads: no whole quotient, the base's stays
  apply_overrides(&odd, {{"heads", "48", "--heads"}});
  EXPECT_EQ(odd.head_dim, 128);
}

}  // namespace
