// Golden outputs: every renderer's text and JSON, and the files the commands write, on small
// fixtures, compared with the recorded outputs in tests/golden/. A change that moves code must
// leave these byte-identical; a change that means to alter an output re-records it with
//   LUMOS_UPDATE_GOLDENS=1 build/tests/cli_tests --gtest_filter='*GoldenOutputs*'
// and the diff of tests/golden/ shows what changed. Numbers are rounded to six significant
// digits before comparing (the last bits of a sum are not part of the contract), and what
// changes from run to run (wall times, temporary paths, the version) is masked; the case list,
// with its masks, is tests/golden/cases.txt.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_util.hpp"

namespace lumos::testing {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string name;                // tests/golden/<name>.txt
  std::string args;                // lumos's arguments, with {tmp}, {examples}, {traces}
  std::vector<std::string> files;  // files the run writes, appended to the output
  std::vector<std::string> masks;  // regular expressions whose matches are masked
  std::vector<std::string> pre;    // lumos runs before it (fixtures), their output ignored
  bool needs_traces = false;
};

// gtest names a case by this instead of dumping its bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << c.name;
}

std::string golden_dir() {
  return LUMOS_GOLDEN_DIR;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// cases.txt: one case a line, `name | arguments [| files F1 F2] [| mask REGEX] [| pre ARGS]
// [| traces]`; `#` starts a comment line. `pre` runs lumos first (to write a fixture), `traces`
// marks a case that reads the shared traces.
std::vector<GoldenCase> read_cases() {
  std::vector<GoldenCase> out;
  std::vector<std::string> every_case_masks;
  std::ifstream in(golden_dir() + "/cases.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    if (line.rfind("mask ", 0) == 0) {
      every_case_masks.push_back(line.substr(5));
      continue;
    }
    std::vector<std::string> parts;
    std::string part;
    std::istringstream ls(line);
    while (std::getline(ls, part, '|')) parts.push_back(trim(part));
    GoldenCase c;
    c.name = parts.at(0);
    c.args = parts.size() > 1 ? parts[1] : "";
    for (size_t i = 2; i < parts.size(); ++i) {
      if (parts[i].rfind("files ", 0) == 0) {
        std::istringstream fs_in(parts[i].substr(6));
        std::string f;
        while (fs_in >> f) c.files.push_back(f);
      } else if (parts[i].rfind("mask ", 0) == 0) {
        c.masks.push_back(parts[i].substr(5));
      } else if (parts[i].rfind("pre ", 0) == 0) {
        c.pre.push_back(parts[i].substr(4));
      } else if (parts[i] == "traces") {
        c.needs_traces = true;
      }
    }
    out.push_back(c);
  }
  for (auto& c : out)
    c.masks.insert(c.masks.begin(), every_case_masks.begin(), every_case_masks.end());
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

std::string expand(const std::string& s, const std::string& tmp) {
  std::string r = replace_all(s, "{tmp}", tmp);
  r = replace_all(r, "{examples}", LUMOS_EXAMPLES_DIR);
  r = replace_all(r, "{grid}", LUMOS_GRID_DIR);
  return replace_all(r, "{traces}", trace_dir());
}

// Every number (integer, decimal or scientific, not inside a word) at six significant digits.
std::string round_numbers(const std::string& s) {
  static const std::regex number(R"((^|[^A-Za-z0-9_.])(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?))");
  std::string out;
  auto it = std::sregex_iterator(s.begin(), s.end(), number);
  size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const size_t num_pos = static_cast<size_t>(m.position(2));
    out.append(s, last, num_pos - last);
    const std::string text = m.str(2);
    // Short integers stay as they are (counts, indices, dates); the rest is rounded.
    if (text.find_first_of(".eE") == std::string::npos && text.size() <= 6) {
      out += text;
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", std::strtod(text.c_str(), nullptr));
      out += buf;
    }
    last = num_pos + text.size();
  }
  out.append(s, last, std::string::npos);
  return out;
}

std::string normalise(std::string s, const GoldenCase& c, const std::string& tmp) {
  s = replace_all(s, tmp, "{tmp}");
  s = replace_all(s, LUMOS_EXAMPLES_DIR, "{examples}");
  s = replace_all(s, trace_dir(), "{traces}");
  s = replace_all(s, LUMOS_GRID_DIR, "{grid}");
  for (const auto& m : c.masks) s = std::regex_replace(s, std::regex(m), "<masked>");
  return round_numbers(s);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing>\n";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string run_case(const GoldenCase& c, const TempDir& tmp) {
  for (const auto& p : c.pre) {
    const RunResult fixture = run_lumos(expand(p, tmp.path()));
    EXPECT_EQ(fixture.exit_code, 0) << "fixture: lumos " << p << "\n" << fixture.out;
  }
  const std::string args = expand(c.args, tmp.path());
  const std::string out_file = tmp.file("golden.stdout");
  const std::string err_file = tmp.file("golden.stderr");
  const RunResult r = run_shell(std::string(LUMOS_BINARY) + " " + args + " >" + out_file + " 2>" +
                                err_file + "; echo $?");
  std::string got = "$ lumos " + c.args + "\n== exit " + trim(r.out.substr(0, r.out.find('\n'))) +
                    "\n== stdout\n" + read_file(out_file) + "== stderr\n" + read_file(err_file);
  for (const auto& f : c.files) got += "== file " + f + "\n" + read_file(expand(f, tmp.path()));
  return normalise(got, c, tmp.path());
}

class GoldenOutputs : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenOutputs, MatchRecordedOutput) {
  const GoldenCase& c = GetParam();
  if (c.needs_traces) {
    LUMOS_REQUIRE_TRACES();
    if (!fs::exists(LUMOS_GRID_DIR))
      GTEST_SKIP() << "shared grid series not found at " << LUMOS_GRID_DIR;
  }
  TempDir tmp;
  const std::string got = run_case(c, tmp);
  ASSERT_FALSE(crashed_or_sanitizer_report({0, got})) << got;
  const std::string path = golden_dir() + "/" + c.name + ".txt";
  const char* update = std::getenv("LUMOS_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << got;
    GTEST_SKIP() << "recorded " << path;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing; record it with LUMOS_UPDATE_GOLDENS=1";
  const std::string want = read_file(path);
  if (got == want) return;
  // The first differing line, with its neighbours, says more than two whole documents.
  std::istringstream a(want), b(got);
  std::string la, lb;
  int line = 1;
  while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
  FAIL() << c.name << ": output differs from " << path << " at line " << line
         << "\n  recorded: " << la << "\n  now:      " << lb
         << "\n(re-record with LUMOS_UPDATE_GOLDENS=1 if the change is meant)";
}

std::string case_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string n = info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Commands, GoldenOutputs, ::testing::ValuesIn(read_cases()), case_name);

TEST(GoldenNormalise, RoundsLongNumbersAndKeepsShortIntegers) {
  EXPECT_EQ(round_numbers("step 1.23456789 s, 12 ranks, 1234567 tokens, x2 v1.5e-7 1.5e-7"),
            "step 1.23457 s, 12 ranks, 1.23457e+06 tokens, x2 v1.5e-7 1.5e-07");
  EXPECT_EQ(round_numbers("-0.5 and 3.0"), "-0.5 and 3");
}

}  // namespace
}  // namespace lumos::testing
