// No run overwrites what it reads or writes one file twice: an output naming an input (by path,
// hard link, symbolic link, or as a file of an input folder) or another output is refused before
// any work, in one line naming both, and the input is left as it was. Every file input is read
// through one reader that refuses a named pipe instead of waiting on it, and every count option
// through one parser that refuses a value beyond its range instead of wrapping it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using lumos::testing::expect_one_line_exit_1;
using lumos::testing::run_lumos;
using lumos::testing::RunResult;
using lumos::testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string fleet_file(const std::string& name) {
  return std::string(LUMOS_EXAMPLES_DIR) + "/fleets/" + name;
}

// A demo trace at tmp/name, and its bytes.
std::string demo_trace(const TempDir& tmp, const std::string& name = "t.json") {
  const RunResult r = run_lumos("demo-trace -o " + tmp.file(name));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return slurp(tmp.file(name));
}

// `args` refused in one line naming `output` and `input`, with `input` still holding `bytes`.
void expect_refused_and_kept(const std::string& args, const std::string& output,
                             const std::string& input, const std::string& bytes) {
  const RunResult r = run_lumos(args, 120);
  expect_one_line_exit_1(r, "output " + output + " (");
  EXPECT_NE(r.out.find(input), std::string::npos) << args << "\n" << r.out;
  EXPECT_NE(r.out.find("choose another path"), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(slurp(input), bytes) << args << " changed " << input;
}

TEST(OutputNamesAnInput, IngestOntoItsOwnTraceIsRefusedAndTheTraceKept) {
  TempDir tmp;
  const std::string bytes = demo_trace(tmp);
  const std::string t = tmp.file("t.json");
  expect_refused_and_kept("ingest " + t + " -o " + t, t, t, bytes);
}

TEST(OutputNamesAnInput, ReplayTimelineOntoItsTraceIsRefused) {
  TempDir tmp;
  const std::string bytes = demo_trace(tmp);
  const std::string t = tmp.file("t.json");
  expect_refused_and_kept("replay " + t + " --timeline " + t, t, t, bytes);
  // Written another way, the path is still the trace.
  expect_refused_and_kept("replay " + t + " --timeline " + tmp.path() + "/./t.json",
                          tmp.path() + "/./t.json", t, bytes);
}

TEST(OutputNamesAnInput, ReplayUtilizationCsvOntoItsTraceOrTheTimelineIsRefused) {
  TempDir tmp;
  const std::string bytes = demo_trace(tmp);
  const std::string t = tmp.file("t.json");
  expect_refused_and_kept("replay " + t + " --utilization-csv " + t, t, t, bytes);
  // Two outputs on one path: the second would silently replace the first.
  const std::string o = tmp.file("o.x");
  const RunResult r = run_lumos("replay " + t + " --timeline " + o + " --utilization-csv " + o);
  expect_one_line_exit_1(r, "is also the output " + o + " (--timeline)");
  EXPECT_FALSE(fs::exists(o));
}

TEST(OutputNamesAnInput, WhatifCsvOntoItsTraceIsRefused) {
  TempDir tmp;
  const std::string bytes = demo_trace(tmp);
  const std::string t = tmp.file("t.json");
  expect_refused_and_kept("whatif " + t + " --gpus h100,a100 --csv " + t, t, t, bytes);
}

TEST(OutputNamesAnInput, ParetoOntoItsInputCsvIsRefused) {
  TempDir tmp;
  const std::string bytes = "index,time_to_train_h,operational_kg\n0,1,2\n1,2,1\n";
  const std::string in = tmp.write("in.csv", bytes);
  expect_refused_and_kept("pareto " + in + " -o " + in, in, in, bytes);
  expect_refused_and_kept("pareto --merge " + in + " -o " + in, in, in, bytes);
}

TEST(OutputNamesAnInput, PlaceOutputsOntoTheFleetFileAreRefused) {
  TempDir tmp;
  const std::string bytes = slurp(fleet_file("two-servers.toml"));
  const std::string f = tmp.write("f.toml", bytes);
  const std::string run = "place " + f + " --utilization 0:1:0.5 --job-score 1 ";
  expect_refused_and_kept(run + "-o " + f, f, f, bytes);
  expect_refused_and_kept(run + "--plot " + f, f, f, bytes);
  // The CSV and the SVG of one run in one file: the second would replace the first.
  const RunResult r = run_lumos(run + "-o " + tmp.file("u") + " --plot " + tmp.file("u"));
  expect_one_line_exit_1(r, "output " + tmp.file("u") + " (--plot) is also the output");
  EXPECT_FALSE(fs::exists(tmp.file("u")));
}

TEST(OutputNamesAnInput, SweepVariantsAndFrontInOneFileAreRefusedBeforeTheSweep) {
  TempDir tmp;
  const std::string x = tmp.file("x.csv");
  const RunResult r = run_lumos("sweep --model llama3-8b --gpus 16 --tp 1 --pp 1 --gpu h100 -o " +
                                x + " --pareto " + x);
  expect_one_line_exit_1(r, "output " + x + " (--pareto) is also the output " + x + " (-o)");
  EXPECT_FALSE(fs::exists(x)) << "the sweep ran and wrote " << x;
  // A sweep file is an input too.
  const std::string spec_bytes = "[model]\npreset = \"llama3-8b\"\n";
  const std::string spec = tmp.write("s.toml", spec_bytes);
  expect_refused_and_kept("sweep --spec " + spec + " --gpus 16 --tp 1 --pp 1 -o " + spec, spec,
                          spec, spec_bytes);
}

TEST(OutputNamesAnInput, AHardLinkOrASymbolicLinkToTheInputIsTheInput) {
  TempDir tmp;
  const std::string bytes = demo_trace(tmp);
  const std::string t = tmp.file("t.json");
  fs::create_hard_link(t, tmp.file("hard.json"));
  fs::create_symlink(t, tmp.file("sym.json"));
  for (const std::string link : {tmp.file("hard.json"), tmp.file("sym.json")}) {
    expect_refused_and_kept("ingest " + t + " -o " + link, link, t, bytes);
    expect_refused_and_kept("replay " + link + " --timeline " + t, t, link, bytes);
  }
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(tmp.file("sym.json"))));
}

TEST(OutputNamesAnInput, AFileOfAnInputFolderIsAnInput) {
  TempDir tmp;
  fs::create_directory(tmp.file("job"));
  const std::string bytes = demo_trace(tmp, "job/rank0.json");
  const std::string rank = tmp.file("job/rank0.json");
  expect_refused_and_kept("replay " + tmp.file("job") + " --timeline " + rank, rank, rank, bytes);
  expect_refused_and_kept("whatif " + tmp.file("job") + " --csv " + rank, rank, rank, bytes);
  // A kernels_db folder given with --db: its calibration is not rewritten in place.
  fs::create_directory(tmp.file("db"));
  const std::string cal = tmp.write("db/calibration.json", "{}");
  expect_refused_and_kept(
      "bench estimate --runs 1 --db " + tmp.file("db") + " --write-residuals " + cal, cal, cal,
      "{}");
}

TEST(OutputNamesAnInput, ModelFilesAreInputsOfEstimateAndGenerate) {
  TempDir tmp;
  const std::string bytes = "preset = \"llama3-8b\"\nlayers = 4\n";
  const std::string m = tmp.write("m.toml", bytes);
  expect_refused_and_kept("estimate --model-file " + m + " --search --gpus 8 --csv " + m, m, m,
                          bytes);
  expect_refused_and_kept("generate --model-file " + m + " -o " + m, m, m, bytes);
}

// A named pipe with no writer: opening it for reading would wait for ever.
TEST(InputsAreRegularFiles, ANamedPipeIsRefusedAtOnceByEveryFileInput) {
  TempDir tmp;
  const std::string p = tmp.file("p");
  ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
  const std::string fleet = fleet_file("two-servers.toml");
  for (const std::string& args :
       {"pareto " + p, "pareto --merge " + p, "place " + p + " --score-year",
        "place " + fleet + " --jobs " + p, "place " + fleet + " --sweep " + p, "sweep --spec " + p,
        "estimate --model-file " + p, "replay " + p, "ingest " + p + " -o " + tmp.file("g.lgraph"),
        "carbon --grid-series " + p}) {
    const RunResult r = run_lumos(args, 10);
    EXPECT_NE(r.exit_code, 124) << args << " waited on the pipe";
    expect_one_line_exit_1(r, p + " is a named pipe (FIFO)");
  }
}

TEST(CountsDoNotWrap, ValuesBeyondAnOptionsRangeAreRefusedNotWrapped) {
  TempDir tmp;
  // Each value, read into 32 bits, wraps to a small one that the command would have run with.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench batch --backend cpu --nodes 5000000000", "--nodes must be between 2 and 20000000"},
      {"bench batch --backend cpu --variants 4294967297", "--variants must be between 1 and"},
      {"sweep --model llama3-8b --gpus 16 --tp 1 --pp 1 --gpu h100 --top 5000000000",
       "--top must be between 0 and 1000000 (got 5000000000)"},
      {"sweep --threads 4294967298 --gpus 16 --tp 1 --pp 1", "--threads must be between 0 and"},
      {"demo-trace --steps 4294967297 -o " + tmp.file("d.json"), "--steps must be between 1 and"},
      {"estimate --tp 4294967298", "--tp must be between 1 and 65536 (got 4294967298)"},
      {"estimate --gbs 18446744073709551680", "--gbs must be between 1 and"},
      {"estimate --search --gpus 16 --top 4294967306", "--top must be between 0 and"},
      {"whatif --dp 4294967298", "--dp must be between 1 and 65536"},
      {"place " + fleet_file("two-servers.toml") + " --sweep x.csv --copies 4294967297",
       "--copies must be between 1 and 100000"},
      {"bench estimate --runs 4294967297", "--runs must be between 1 and 1000"},
      {"cost gemm --m 4096 --n 4096 --k 18446744073709551617", "--k must be between 1 and"},
  };
  for (const auto& [args, needle] : cases) {
    expect_one_line_exit_1(run_lumos(args, 30), needle);
    EXPECT_FALSE(fs::exists(tmp.file("d.json"))) << args;
  }
}

TEST(CountsDoNotWrap, HelpStatesEachCountsRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench batch --help", "graph nodes (2 to 20000000)"},
      {"sweep --help", "configurations shown (0 to 1000000)"},
      {"estimate --help", "tensor parallel degree (1 to 65536)"},
      {"place --help", "(1 to 100000)"},
      {"cost collective --help", "ranks in the group (1 to 1048576)"},
  };
  for (const auto& [args, needle] : cases) {
    const RunResult r = run_lumos(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  }
}

TEST(NameLists, AnEmptyGpuNameIsRefusedNotDropped) {
  expect_one_line_exit_1(run_lumos("whatif --gpus h100,,a100"),
                         "--gpus: an empty name in 'h100,,a100'");
  expect_one_line_exit_1(run_lumos("whatif --gpus h100,"), "--gpus: an empty name in 'h100,'");
}

}  // namespace
