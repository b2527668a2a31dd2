// What-if grids: the product of GPUs and speed axes, labelled and carrying each variant's GPU;
// refused before anything is built when it would be too large to run; speed specs that name the
// real problem.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "whatif/grid.hpp"
#include "whatif/speed_axes.hpp"

namespace {

using lumos::InputError;
using lumos::whatif::build_grid;
using lumos::whatif::parse_speed_axes;
using lumos::whatif::parse_speed_variant;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(WhatifGrid, IsTheProductOfGpusAndAxesWithEachVariantsGpu) {
  const auto& db = lumos::cost::embedded_db();
  const auto axes = parse_speed_axes("compute=1,2;comm=0.5,1,2", "--speed");
  const auto g = build_grid(db, "h100", {"a100", "b200"}, axes, 1000);
  ASSERT_EQ(g.batch.count, 12u);
  ASSERT_EQ(g.variant_gpu.size(), 12u);
  EXPECT_EQ(g.variant_gpu[0], "a100");
  EXPECT_EQ(g.variant_gpu[11], "b200");
  EXPECT_EQ(g.batch.labels[5], "a100 computex2 commx2");
  const int comm = static_cast<int>(lumos::graph::NodeClass::kComm);
  EXPECT_FLOAT_EQ(g.batch.speed[comm][1] / g.batch.speed[comm][0], 2.0f);
}

TEST(WhatifGrid, TooManyNodeUpdatesAreRefusedBeforeBuilding) {
  const auto& db = lumos::cost::embedded_db();
  const auto axes = parse_speed_axes("compute=1,2,3,4,5,6,7,8,9,10", "--speed");
  // 20 variants of a 2e9-node graph: 4e10 node updates.
  const std::string e = error_of([&] {
    build_grid(db, "h100", {"a100", "b200"}, axes, 2'000'000'000ull);
  });
  EXPECT_NE(e.find("node updates"), std::string::npos) << e;
  EXPECT_NO_THROW(build_grid(db, "h100", {"a100", "b200"}, axes, 1'000'000));
}

TEST(SpeedAxes, OutOfRangeAndEmptyFactorsNameTheProblem) {
  EXPECT_NE(error_of([] { parse_speed_variant("compute=inf", "--speed"); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_speed_variant("compute=1e39", "--speed"); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_speed_variant("compute=1e-50", "--speed"); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_speed_variant("compute=fast", "--speed"); }).find("not a number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_speed_axes(";;", "--speed"); }).find("expected class="),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_speed_axes("comm=1,,2", "--speed"); }).find("not a number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_speed_axes("warp=2", "--speed"); }).find("unknown class"),
            std::string::npos);
  EXPECT_EQ(parse_speed_axes("memory=0.5", "--speed").front().factors.front(), 0.5f);
}

}  // namespace
