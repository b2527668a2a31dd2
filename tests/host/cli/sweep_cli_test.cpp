// `lumos sweep` and `lumos pareto` through the command: both CSVs written, the front recomputed
// from the variants CSV equals the sweep's, shards merged equal the single run, and bad input
// gets one line, exit code 1 and no output file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kSmall =
    "sweep --model gpt3-15b --layers 8 --gpus 8,16 --tp 1,2 --pp 1,2 --gbs 32 --gpu h100,a100 "
    "--threads 2";

TEST(SweepCli, WritesVariantsAndTheirParetoFront) {
  lumos::testing::TempDir tmp;
  const auto r = run_lumos(kSmall + " -o " + tmp.file("v.csv") + " --pareto " + tmp.file("p.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("fastest"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("configurations/s"), std::string::npos) << r.out;
  const std::string variants = slurp(tmp.file("v.csv"));
  EXPECT_EQ(
      variants.rfind(
          "index,gpu,topology,nic_gbps,gpus_per_node,nvlink_gb_per_s,speed,region,pue,gpus,tp,", 0),
      0u)
      << variants.substr(0, 200);
  // 8 and 16 GPUs x tp 1,2 x pp 1,2 x two GPU types.
  EXPECT_EQ(std::count(variants.begin(), variants.end(), '\n'), 1 + 2 * 2 * 2 * 2);
  const auto again = run_lumos("pareto " + tmp.file("v.csv") + " -o " + tmp.file("p2.csv"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(slurp(tmp.file("p2.csv")), slurp(tmp.file("p.csv")));
  const std::string front = slurp(tmp.file("p.csv"));
  EXPECT_GT(std::count(front.begin(), front.end(), '\n'), 1) << front;
}

TEST(SweepCli, AVariantsCsvOnStandardOutputIsTheCsvAlone) {
  lumos::testing::TempDir tmp;
  const auto r = lumos::testing::run_shell(std::string(LUMOS_BINARY) + " " + kSmall + " -o - 2>" +
                                           tmp.file("err.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("index,", 0), 0u) << r.out.substr(0, 200);
  EXPECT_EQ(r.out.find("fastest"), std::string::npos);
  EXPECT_NE(slurp(tmp.file("err.txt")).find("fastest"), std::string::npos);
}

TEST(SweepCli, ShardsMergedEqualTheSingleRun) {
  lumos::testing::TempDir tmp;
  ASSERT_EQ(run_lumos(kSmall + " -o " + tmp.file("all.csv") + " --pareto " + tmp.file("allp.csv"))
                .exit_code,
            0);
  std::string shards, fronts;
  for (int i = 0; i < 3; ++i) {
    const std::string v = tmp.file("v" + std::to_string(i) + ".csv");
    const std::string p = tmp.file("p" + std::to_string(i) + ".csv");
    const auto r =
        run_lumos(kSmall + " --shard " + std::to_string(i) + "/3 -o " + v + " --pareto " + p);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    shards += " " + v;
    fronts += " " + p;
  }
  ASSERT_EQ(run_lumos("pareto --merge" + shards + " -o " + tmp.file("merged.csv")).exit_code, 0);
  EXPECT_EQ(slurp(tmp.file("merged.csv")), slurp(tmp.file("all.csv")));
  // The front of the shards' fronts is the single run's front.
  ASSERT_EQ(run_lumos("pareto" + fronts + " -o " + tmp.file("mergedp.csv")).exit_code, 0);
  EXPECT_EQ(slurp(tmp.file("mergedp.csv")), slurp(tmp.file("allp.csv")));
}

// `lumos pareto --merge` puts shards given in any order back in the sweep's order, to a file or
// to standard output, and says how many rows it wrote.
TEST(SweepCli, ParetoMergeOfShardsInAnyOrderIsTheSingleRun) {
  lumos::testing::TempDir tmp;
  ASSERT_EQ(run_lumos(kSmall + " -o " + tmp.file("all.csv")).exit_code, 0);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run_lumos(kSmall + " --shard " + std::to_string(i) + "/2 -o " +
                        tmp.file("s" + std::to_string(i) + ".csv"))
                  .exit_code,
              0);
  const std::string shards = " " + tmp.file("s1.csv") + " " + tmp.file("s0.csv");
  const auto r = run_lumos("pareto --merge" + shards + " -o " + tmp.file("m.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(slurp(tmp.file("m.csv")), slurp(tmp.file("all.csv")));
  EXPECT_NE(r.out.find("wrote 16 of 16 rows to "), std::string::npos) << r.out;
  const auto out = run_lumos("pareto --merge" + shards);
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.out, slurp(tmp.file("all.csv")));
}

// Every layer built gives the rows of folded layers (numbers to 1e-9; the rest the same).
TEST(SweepCli, FoldedAndUnfoldedGraphsGiveTheSameRows) {
  lumos::testing::TempDir tmp;
  const std::string spec = kSmall + " --recompute none,full --interleave 1,2";
  ASSERT_EQ(run_lumos(spec + " -o " + tmp.file("on.csv")).exit_code, 0);
  ASSERT_EQ(run_lumos(spec + " --fold off -o " + tmp.file("off.csv")).exit_code, 0);
  std::istringstream on(slurp(tmp.file("on.csv"))), off(slurp(tmp.file("off.csv")));
  std::string a, b;
  int rows = 0;
  while (std::getline(on, a)) {
    ASSERT_TRUE(std::getline(off, b));
    std::istringstream fa(a), fb(b);
    std::string x, y;
    while (std::getline(fa, x, ',')) {
      ASSERT_TRUE(std::getline(fb, y, ','));
      char *ex = nullptr, *ey = nullptr;
      const double vx = std::strtod(x.c_str(), &ex), vy = std::strtod(y.c_str(), &ey);
      if (!x.empty() && *ex == 0 && !y.empty() && *ey == 0)
        EXPECT_NEAR(vx, vy, 1e-9 * std::abs(vy)) << a;
      else
        EXPECT_EQ(x, y) << a;
    }
    ++rows;
  }
  EXPECT_FALSE(std::getline(off, b));
  EXPECT_GT(rows, 20);
}

TEST(SweepCli, BadInputGetsOneLineAndNoFile) {
  lumos::testing::TempDir tmp;
  const std::string out = " -o " + tmp.file("v.csv") + " --pareto " + tmp.file("p.csv");
  for (const std::string& bad :
       {std::string("sweep --tp ''"), std::string("sweep --tp 0"), std::string("sweep --gpu nope"),
        std::string("sweep --gpus 7 --tp 2 --pp 2"), std::string("sweep --shard 3/3"),
        std::string("sweep --objectives time_to_train_h"), std::string("sweep --gpus 8 --dp 2"),
        std::string("sweep --recompute sometimes"), std::string("sweep --threads 100000000"),
        std::string("sweep --gpus 8 --tp 4294967296 --cp 4294967296"),
        std::string("sweep --speed 'compute=1,2;compute=3'"), std::string("sweep --fold maybe")}) {
    const auto r = run_lumos(bad + out);
    EXPECT_EQ(r.exit_code, 1) << bad << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << bad << "\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("v.csv"))) << bad;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("p.csv"))) << bad;
  }
  const std::string csv = tmp.write("t.csv", "index,feasible,a\n0,1,3\n");
  const auto r = run_lumos("pareto " + csv + " --objectives a,b -o " + tmp.file("o.csv"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("no column 'b'"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("o.csv")));
  const std::string other = tmp.write("u.csv", "index,feasible,b\n1,1,3\n");
  EXPECT_EQ(run_lumos("pareto --merge " + csv + " " + other).exit_code, 1);
  const auto twice = run_lumos("pareto --merge " + csv + " " + csv);
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_NE(twice.out.find("twice"), std::string::npos) << twice.out;
}

TEST(SweepCli, ASweepFileEqualsTheSameFlagsAndTheCommandLineWins) {
  lumos::testing::TempDir tmp;
  const std::string spec = tmp.write("s.toml",
                                     "[model]\npreset = \"gpt3-15b\"\nlayers = 8\n\n[sweep]\n"
                                     "gpus = [8, 16]\ntp = \"1,2\"\npp = [1, 2]\ngbs = 32\n"
                                     "gpu = [\"h100\", \"a100\"]\nthreads_not_here = 1\n");
  // An unknown key: its line, exit 1, nothing written.
  auto r = run_lumos("sweep --spec " + spec + " -o " + tmp.file("v.csv"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("s.toml:11: threads_not_here: unknown key"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("v.csv")));
  // A bad axis value the file gives is named as the file writes it, not as the flag.
  const std::string bad = tmp.write("b.toml", "[sweep]\ngpus = 8\ntp = 2.5\n");
  r = run_lumos("sweep --spec " + bad + " -o " + tmp.file("v.csv"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("b.toml: [sweep] tp: '2.5' is not a positive integer"), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("v.csv")));
  // Keys of two words, and messages that give the value after the option's name, likewise; the
  // same option on the command line keeps its flag.
  for (const auto& [body, want] : std::vector<std::pair<std::string, std::string>>{
           {"dist_opt = \"maybe\"", "c.toml: [sweep] dist_opt: 'maybe': expected on, off or auto"},
           {"pue = 0.5", "c.toml: [sweep] pue 0.5: expected a PUE in [1, 5]"},
           {"nic_bandwidth = \"400\"", "c.toml: [sweep] nic_bandwidth: the unit is missing"}}) {
    const std::string c = tmp.write("c.toml", "[sweep]\ngpus = 8\n" + body + "\n");
    r = run_lumos("sweep --spec " + c + " -o " + tmp.file("v.csv"));
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  }
  r = run_lumos("sweep --spec " + tmp.file("c.toml") + " --nic-bandwidth 400 -o " +
                tmp.file("v.csv"));
  EXPECT_NE(r.out.find("lumos: --nic-bandwidth: the unit is missing"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("v.csv")));
  const std::string good =
      tmp.write("g.toml",
                "[model]\npreset = \"gpt3-15b\"\nlayers = 8\n\n[sweep]\ngpus = [8, 16]\ntp = "
                "\"1,2\"\npp = [1, 4]\ngbs = 32\ngpu = [\"h100\", \"a100\"]\n");
  // --pp on the command line replaces the file's.
  r = run_lumos("sweep --spec " + good + " --pp 1,2 --threads 2 -o " + tmp.file("v.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = run_lumos(kSmall + " -o " + tmp.file("flags.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(slurp(tmp.file("v.csv")), slurp(tmp.file("flags.csv")));
}

TEST(SweepCli, TheSlurmArrayScriptMergesToTheSingleRun) {
  lumos::testing::TempDir tmp;
  const std::string script = std::string(LUMOS_KERNELS_DB) + "/../scripts/sweep-slurm.sh";
  const std::string args = kSmall.substr(std::string("sweep").size());
  for (int i = 0; i < 3; ++i) {
    const auto r = lumos::testing::run_shell(
        "LUMOS=" + std::string(LUMOS_BINARY) + " SLURM_ARRAY_TASK_ID=" + std::to_string(i) +
        " SLURM_ARRAY_TASK_COUNT=3 bash " + script + " " + tmp.path() + args + " 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  const auto merged = lumos::testing::run_shell("LUMOS=" + std::string(LUMOS_BINARY) + " bash " +
                                                script + " --merge " + tmp.path() + " 2>&1");
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  ASSERT_EQ(run_lumos(kSmall + " -o " + tmp.file("one.csv") + " --pareto " + tmp.file("onep.csv"))
                .exit_code,
            0);
  EXPECT_EQ(slurp(tmp.file("variants.csv")), slurp(tmp.file("one.csv")));
  EXPECT_EQ(slurp(tmp.file("pareto.csv")), slurp(tmp.file("onep.csv")));
}

TEST(SweepCli, MpirunRanksEqualTheSingleRun) {
  if (run_lumos("info").out.find("mpi: yes") == std::string::npos)
    GTEST_SKIP() << "lumos was built without MPI (scripts/setup.sh installs libopenmpi-dev)";
  if (lumos::testing::run_shell("command -v mpirun").exit_code != 0)
    GTEST_SKIP() << "mpirun is not installed (scripts/setup.sh installs openmpi-bin)";
  lumos::testing::TempDir tmp;
  ASSERT_EQ(run_lumos(kSmall + " -o " + tmp.file("one.csv") + " --pareto " + tmp.file("onep.csv"))
                .exit_code,
            0);
  // Open MPI refuses root without these; its own allocations at exit are not lumos's leaks.
  const std::string env =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" ";
  for (const char* ranks : {"-n 2", "-n 4 --oversubscribe"}) {
    const std::string out = tmp.file("m.csv"), front = tmp.file("mp.csv");
    const auto r = lumos::testing::run_shell(env + "timeout 120 mpirun " + ranks + " " +
                                             std::string(LUMOS_BINARY) + " " + kSmall + " -o " +
                                             out + " --pareto " + front + " 2>&1");
    ASSERT_EQ(r.exit_code, 0) << ranks << "\n" << r.out;
    EXPECT_NE(r.out.find("ranks"), std::string::npos) << r.out;
    EXPECT_EQ(slurp(out), slurp(tmp.file("one.csv"))) << ranks;
    EXPECT_EQ(slurp(front), slurp(tmp.file("onep.csv"))) << ranks;
  }
  // Bad input under mpirun: one line from lumos, exit 1.
  const auto bad = lumos::testing::run_shell(env + "timeout 120 mpirun -n 2 " +
                                             std::string(LUMOS_BINARY) + " sweep --tp 0 2>&1");
  EXPECT_NE(bad.exit_code, 0);
  size_t lines = 0;
  for (size_t at = 0; (at = bad.out.find("lumos: --tp", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 1u) << bad.out;
}

}  // namespace
