// The sweep CSV's numbers are printf's %.6g and %.9g to the byte, whatever formats them
// (docs/reference/outputs.md): values at rounding edges, tiny, huge, negative and zero.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/format.hpp"
#include "report/sweep_csv.hpp"

namespace lumos::report {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',')
      out.emplace_back();
    else
      out.back().push_back(c);
  }
  return out;
}

TEST(SweepCsvNumbers, EqualPrintfGeneralFormatsAtEdges) {
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      1.0,
                                      0.5,
                                      1e-7,
                                      9.9999995,
                                      99999.95,
                                      999999.5,
                                      123456789,
                                      1e21,
                                      -2.5e-5,
                                      0.1 + 0.2,
                                      1234567.891,
                                      2.0 / 3,
                                      4.35e-300,
                                      1.7976931348623157e308,
                                      0.000123456789012};
  sweep::SweepResult r;
  for (double v : values) {
    sweep::SweepRow row;
    row.estimated = true;
    row.feasible = true;
    row.step_time_us = v * 1e6;  // written in seconds, %.9g
    row.mfu = v;                 // %.6g
    row.memory_gib = v;          // %.6g, also for rows not replayed
    r.rows.push_back(row);
  }
  std::ostringstream os;
  sweep_csv(os, r);
  std::istringstream in(os.str());
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  const size_t step = column("step_time_s"), mfu = column("mfu"), mem = column("memory_gib");
  for (double v : values) {
    ASSERT_TRUE(std::getline(in, line));
    const std::vector<std::string> cells = split(line);
    ASSERT_EQ(cells.size(), header.size());
    EXPECT_EQ(cells[step], strprintf("%.9g", v * 1e6 * 1e-6)) << v;
    EXPECT_EQ(cells[mfu], strprintf("%.6g", v)) << v;
    EXPECT_EQ(cells[mem], strprintf("%.6g", v)) << v;
  }
  EXPECT_FALSE(std::getline(in, line));
}

}  // namespace
}  // namespace lumos::report
