// Whether an output is an input or another output: one file by device and inode through hard
// and symbolic links, a new file by its normalised path; the message names both paths.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/error.hpp"
#include "common/path_identity.hpp"
#include "support/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using lumos::common::check_outputs_distinct;
using lumos::common::RolePath;
using lumos::common::same_file;
using lumos::testing::input_error_of;
using lumos::testing::TempDir;

TEST(PathIdentity, HardAndSymbolicLinksAreTheFileTheyName) {
  TempDir tmp;
  const std::string a = tmp.write("a.json", "{}");
  const std::string b = tmp.write("b.json", "{}");  // the same bytes, another file
  fs::create_hard_link(a, tmp.file("hard.json"));
  fs::create_symlink(a, tmp.file("sym.json"));
  EXPECT_TRUE(same_file(a, tmp.file("hard.json")));
  EXPECT_TRUE(same_file(a, tmp.file("sym.json")));
  EXPECT_TRUE(same_file(tmp.file("hard.json"), tmp.file("sym.json")));
  EXPECT_FALSE(same_file(a, b));
}

TEST(PathIdentity, FilesNotYetWrittenCollideOnlyByTheirNormalisedPath) {
  TempDir tmp;
  fs::create_directory(tmp.file("sub"));
  fs::create_directory_symlink(tmp.file("sub"), tmp.file("link"));
  EXPECT_TRUE(same_file(tmp.file("new.csv"), tmp.file("sub/../new.csv")));
  EXPECT_TRUE(same_file(tmp.file("sub/new.csv"), tmp.file("link/new.csv")));
  EXPECT_FALSE(same_file(tmp.file("new.csv"), tmp.file("other.csv")));
  tmp.write("old.csv", "x");
  EXPECT_FALSE(same_file(tmp.file("old.csv"), tmp.file("new.csv")));
}

TEST(PathIdentity, AnOutputThatIsAnInputIsRefusedNamingBoth) {
  TempDir tmp;
  const std::string t = tmp.write("t.json", "{}");
  fs::create_symlink(t, tmp.file("sym.json"));
  EXPECT_EQ(
      input_error_of([&] {
        check_outputs_distinct("lumos ingest", {{t, "the input trace"}}, {{t, "-o"}});
      }),
      "lumos ingest: output " + t + " (-o) is the input trace " + t + "; choose another path");
  const std::string m = input_error_of([&] {
    check_outputs_distinct("lumos ingest", {{t, "the input trace"}},
                           {{tmp.file("sym.json"), "-o"}});
  });
  EXPECT_NE(m.find("output " + tmp.file("sym.json") + " (-o) is the input trace " + t), m.npos)
      << m;
}

TEST(PathIdentity, TwoOutputsOfOneRunAreRefusedEvenBeforeEitherExists) {
  TempDir tmp;
  const std::string x = tmp.file("x.csv");
  EXPECT_EQ(input_error_of([&] {
              check_outputs_distinct("lumos sweep", {}, {{x, "-o"}, {x, "--pareto"}});
            }),
            "lumos sweep: output " + x + " (--pareto) is also the output " + x +
                " (-o); choose another path");
  EXPECT_EQ(
      input_error_of([&] {
        check_outputs_distinct("lumos sweep", {}, {{x, "-o"}, {tmp.file("y.csv"), "--pareto"}});
      }),
      "");
}

TEST(PathIdentity, AFileInsideAnInputFolderIsAnInput) {
  TempDir tmp;
  fs::create_directory(tmp.file("job"));
  const std::string rank = tmp.write("job/rank0.json", "{}");
  const std::string m = input_error_of([&] {
    check_outputs_distinct("lumos replay", {{tmp.file("job"), "the input"}},
                           {{rank, "--timeline"}});
  });
  EXPECT_NE(m.find("output " + rank + " (--timeline) is " + rank + " in the input"), m.npos) << m;
  // A new file beside the ranks would be read as one more rank by the next run over the folder.
  const std::string beside = tmp.file("job/timeline.json");
  EXPECT_EQ(input_error_of([&] {
              check_outputs_distinct("lumos replay", {{tmp.file("job"), "the input"}},
                                     {{beside, "--timeline"}});
            }),
            "lumos replay: output " + beside + " (--timeline) is inside the input " +
                tmp.file("job") + "; choose another path");
  // A CSV is never read back as a rank.
  EXPECT_EQ(input_error_of([&] {
              check_outputs_distinct("lumos replay", {{tmp.file("job"), "the input"}},
                                     {{tmp.file("job/steps.csv"), "--csv"}});
            }),
            "");
  // A folder without JSON files is no folder of traces: a file may go beside what is there.
  fs::create_directory(tmp.file("notes"));
  tmp.write("notes/readme.txt", "x");
  EXPECT_EQ(input_error_of([&] {
              check_outputs_distinct("lumos replay", {{tmp.file("notes"), "the input"}},
                                     {{tmp.file("notes/timeline.json"), "--timeline"}});
            }),
            "");
}

TEST(PathIdentity, StandardStreamsAndEmptyPathsAreNotFiles) {
  EXPECT_EQ(input_error_of([] {
              check_outputs_distinct("lumos pareto", {{"-", "the input CSV"}, {"", "the input"}},
                                     {{"-", "-o"}, {"-", "--pareto"}});
            }),
            "");
}

}  // namespace
