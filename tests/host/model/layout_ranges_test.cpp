// check_layout refuses layouts whose derived counts would overflow (GPUs, tokens, activation
// elements), naming the real problem, instead of answering "on 0 x h100" with "MFU inf%".
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"

using namespace lumos::model;

namespace {

std::string layout_error(const ModelSpec& m, const ParallelConfig& c) {
  try {
    check_layout(m, c);
  } catch (const lumos::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Row 10: tp = cp = dp = 2^20 and pp = 128 multiplied to 2^67 GPUs, wrapping to 0.
TEST(LayoutRanges, DegreesAndTheirProductAreCapped) {
  const ModelSpec m = preset("gpt3-15b");
  ParallelConfig c;
  c.tp = c.cp = c.dp = 1 << 20;
  c.pp = 128;
  EXPECT_NE(layout_error(m, c).find("--tp must be between 1 and 65536 (got 1048576)"),
            std::string::npos)
      << layout_error(m, c);
  c = ParallelConfig{};
  c.tp = c.cp = c.dp = 1 << 10;
  c.pp = 2;
  const std::string e = layout_error(m, c);
  EXPECT_NE(e.find("2147483648 GPUs; at most 1048576"), std::string::npos) << e;
  c = ParallelConfig{};
  c.gbs = int64_t{1} << 25;
  EXPECT_NE(layout_error(m, c).find("--gbs 33554432 is above the supported 16777216"),
            std::string::npos);
}

TEST(LayoutRanges, TokensTimesWidthOverflowIsNamed) {
  ModelSpec m = preset("gpt3-15b");
  m.seq = int64_t{1} << 24;
  m.hidden = m.ffn = int64_t{1} << 14;
  m.heads = m.kv_heads = 128;
  m.head_dim = 128;
  m.layers = 2;
  m.vocab = 1024;
  ParallelConfig c;
  c.mbs = c.gbs = int64_t{1} << 24;  // 2^48 tokens x 49152 elements per token: beyond int64
  const std::string e = layout_error(m, c);
  EXPECT_NE(e.find("tokens per micro-batch times the widest activation"), std::string::npos) << e;
  c.mbs = c.gbs = 1;
  EXPECT_EQ(layout_error(m, c), "");
}
