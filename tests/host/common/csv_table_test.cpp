// Reading a CSV back: the header and rows as text cells, blank lines and CR line ends skipped,
// and bad files fail in one line naming the file, the line and the column.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/csv_table.hpp"
#include "common/error.hpp"

namespace {

using lumos::CsvTable;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const lumos::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CsvTable, ReadsTheHeaderAndRowsAsTextCells) {
  std::istringstream in("index,gpu,reason\r\n0,h100,\r\n\r\n1,a100,does not fit\n");
  const CsvTable t = lumos::parse_csv(in, "v.csv");
  EXPECT_EQ(t.source, "v.csv");
  EXPECT_EQ(t.header, (std::vector<std::string>{"index", "gpu", "reason"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"0", "h100", ""}));
  EXPECT_EQ(t.rows[1][2], "does not fit");
  EXPECT_EQ(t.column("gpu"), 1u);
  const lumos::CsvView v = lumos::csv_view(t);
  EXPECT_EQ(v.rows, 2u);
  EXPECT_EQ(v.cell(1, v.column("gpu")), "a100");
}

TEST(CsvTable, BadFilesFailInOneLineNamingTheFileLineAndColumn) {
  std::istringstream short_row("index,a,b\n0,1,2\n0,1\n");
  EXPECT_EQ(error_of([&] { lumos::parse_csv(short_row, "x.csv"); }),
            "x.csv:3: 2 cells, expected 3 as in the header");
  std::istringstream empty("");
  EXPECT_EQ(error_of([&] { lumos::parse_csv(empty, "e.csv"); }),
            "e.csv: empty file, expected a CSV header");
  std::istringstream ok("index,a\n0,1\n");
  const CsvTable t = lumos::parse_csv(ok, "y.csv");
  EXPECT_EQ(error_of([&] { t.column("b"); }), "y.csv: no column 'b' (columns: index, a)");
  EXPECT_EQ(error_of([] { lumos::read_csv("/nonexistent/v.csv"); }),
            "/nonexistent/v.csv: cannot open file (No such file or directory)");
}

TEST(CsvTable, ReadsAFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "lumos_csv_table_test.csv").string();
  std::ofstream(path) << "a,b\n1,2\n";
  const CsvTable t = lumos::read_csv(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.source, path);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][1], "2");
}

}  // namespace
