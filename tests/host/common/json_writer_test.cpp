// Strings are written with exactly JSON's escapes, wherever in the string they fall.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/json_writer.hpp"

namespace lumos::common {
namespace {

std::string written(std::string_view s) {
  std::ostringstream os;
  JsonWriter w(os, JsonWriter::Document::plain);
  w.begin_array().value(s).end_array();
  return os.str();
}

TEST(JsonWriter, PlainStringIsWrittenAsItIs) {
  EXPECT_EQ(written("void at::native::kernel<128, 2>(float*)"),
            "[\"void at::native::kernel<128, 2>(float*)\"]");
  EXPECT_EQ(written(""), "[\"\"]");
}

TEST(JsonWriter, EscapesAtTheStartMiddleAndEnd) {
  EXPECT_EQ(written("\"a\\b\""), R"(["\"a\\b\""])");
  EXPECT_EQ(written("line\nnext\ttab\rret"), R"(["line\nnext\ttab\rret"])");
  EXPECT_EQ(written(std::string("\x01x\x1f", 3)), R"(["\u0001x\u001f"])");
  EXPECT_EQ(written(std::string("nul\0end", 7)), R"(["nul\u0000end"])");
}

TEST(JsonWriter, BytesAboveAsciiPassThrough) {
  EXPECT_EQ(written("\xc2\xb5s \xe2\x86\x92"), "[\"\xc2\xb5s \xe2\x86\x92\"]");
}

}  // namespace
}  // namespace lumos::common
