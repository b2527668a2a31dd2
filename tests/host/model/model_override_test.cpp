// Overriding a preset's fields: a multi-head model stays multi-head when its head count changes;
// a GQA model keeps its KV heads, and says to give them when they no longer divide.
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
  apply_overrides(&m, {{"heads", "48", "--heads"}});
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

}  // namespace
