// Counts read as text and checked against their range, never wrapped into the option's type, and
// name lists that refuse an empty name rather than drop it.
#include <gtest/gtest.h>

#include "common/count_text.hpp"
#include "common/error.hpp"
#include "support/test_util.hpp"

namespace {

using lumos::common::parse_count;
using lumos::common::parse_name_list;
using lumos::testing::input_error_of;

TEST(CountText, ReadsWholeNumbersInTheirRange) {
  EXPECT_EQ(parse_count("0", "--top", 0, 10), 0);
  EXPECT_EQ(parse_count("10", "--top", 0, 10), 10);
  EXPECT_EQ(parse_count("+7", "--top", 0, 10), 7);
  EXPECT_EQ(parse_count("-3", "--skew", -5, 5), -3);
  EXPECT_EQ(parse_count("9223372036854775807", "--seed", 0, INT64_MAX), INT64_MAX);
}

TEST(CountText, AValueTooLargeForA32BitCountIsRefusedNotWrapped) {
  // 5000000000 mod 2^32 = 705032704: what a 32-bit read made of it.
  EXPECT_EQ(input_error_of([] { parse_count("5000000000", "--nodes", 2, UINT32_MAX); }),
            "--nodes must be between 2 and 4294967295 (got 5000000000)");
  EXPECT_EQ(input_error_of([] { parse_count("4294967298", "--tp", 1, 65536); }),
            "--tp must be between 1 and 65536 (got 4294967298)");
  EXPECT_EQ(input_error_of([] { parse_count("99999999999999999999", "--k", 1, 100); }),
            "--k must be between 1 and 100 (got 99999999999999999999)");
  EXPECT_EQ(input_error_of([] { parse_count("-1", "--top", 0, 100); }),
            "--top must be between 0 and 100 (got -1)");
}

TEST(CountText, TextThatIsNotAWholeNumberIsRefused) {
  for (const char* bad : {"", "-", "+", "++1", "+-1", "1e3", "2.5", " 5", "5 ", "0x10", "ten"})
    EXPECT_EQ(input_error_of([&] { parse_count(bad, "--runs", 1, 10); }),
              std::string("--runs: expected a whole number between 1 and 10, got '") + bad + "'")
        << bad;
}

TEST(CountText, NameListsRefuseAnEmptyName) {
  EXPECT_EQ(parse_name_list("h100,a100", "--gpus"), (std::vector<std::string>{"h100", "a100"}));
  EXPECT_EQ(input_error_of([] { parse_name_list("h100,,a100", "--gpus"); }),
            "--gpus: an empty name in 'h100,,a100'");
  EXPECT_EQ(input_error_of([] { parse_name_list("h100,", "--gpus"); }),
            "--gpus: an empty name in 'h100,'");
  EXPECT_EQ(input_error_of([] { parse_name_list("", "--gpus"); }), "--gpus: the list is empty");
}

}  // namespace
