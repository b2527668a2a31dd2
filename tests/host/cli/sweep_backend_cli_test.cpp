// lumos sweep --backend: the CPU backend's rows are auto's on a machine without a GPU, and a
// backend the sweep cannot use is refused in one line before any work.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "support/test_util.hpp"

using lumos::testing::run_lumos;
using lumos::testing::TempDir;

namespace {

const std::string kSweep = "sweep --model llama3-8b --gpus 16 --tp 2 --pp 1,2 --gpu h100,a100";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST(SweepBackendCli, CpuWritesTheSameVariantsAsAuto) {
  if (lumos::engine::cuda_available()) GTEST_SKIP() << "auto is the GPU here";
  TempDir dir;
  const std::string a = dir.file("auto.csv"), c = dir.file("cpu.csv");
  ASSERT_EQ(run_lumos(kSweep + " -o " + a).exit_code, 0);
  ASSERT_EQ(run_lumos(kSweep + " --backend cpu -o " + c).exit_code, 0);
  const std::string auto_csv = slurp(a);
  EXPECT_GT(lines(auto_csv), 2u);
  EXPECT_EQ(auto_csv, slurp(c));
}

TEST(SweepBackendCli, ABackendTheSweepCannotUseIsOneLineBeforeTheWork) {
  std::vector<std::string> refused = {"reference", "gpu"};
  if (!lumos::engine::cuda_available()) refused.push_back("cuda");
  for (const std::string& b : refused) {
    TempDir dir;
    const auto r = run_lumos(kSweep + " --backend " + b + " -o " + dir.file("v.csv"));
    EXPECT_EQ(r.exit_code, 1) << b;
    EXPECT_EQ(lines(r.out), 1u) << b << ": " << r.out;
    EXPECT_NE(r.out.find("backend"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir.file("v.csv"))) << b << ": no partial output";
  }
}
