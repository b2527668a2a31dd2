// The position of the first JSON syntax error: exact offsets on hand-written cases, and on random
// mutations of a real document it agrees with simdjson on which texts are valid.
#include "common/json_syntax.hpp"

#include <gtest/gtest.h>

#include <simdjson.h>

#include <random>
#include <string>

namespace {

using lumos::common::json_error_position;
using lumos::common::json_syntax_error_offset;
using lumos::common::text_position;

TEST(JsonSyntax, NamesTheFirstCharacterThatCannotContinueTheDocument) {
  EXPECT_EQ(json_syntax_error_offset(R"({"a": 1, "b": [true, null, -0.5e+3, "x\n\u00e9"]})"),
            std::nullopt);
  EXPECT_EQ(json_syntax_error_offset("  [ ]  \n"), std::nullopt);
  EXPECT_EQ(json_syntax_error_offset(R"({"a": 1,, "b": 2})"), 8u);  // the second comma
  EXPECT_EQ(json_syntax_error_offset(R"({"a": 1,})"), 8u);          // a key was due
  EXPECT_EQ(json_syntax_error_offset(R"({"a" 1})"), 5u);            // the missing colon
  EXPECT_EQ(json_syntax_error_offset(R"([1, 2)"), 5u);              // cut short: the end
  EXPECT_EQ(json_syntax_error_offset(R"([01])"), 2u);               // no leading zeros
  EXPECT_EQ(json_syntax_error_offset(R"([1.])"), 3u);
  EXPECT_EQ(json_syntax_error_offset(R"(["a\q"])"), 4u);  // not an escape
  EXPECT_EQ(json_syntax_error_offset("[\"a\tb\"]"), 3u);  // a raw tab in a string
  EXPECT_EQ(json_syntax_error_offset("[tru]"), 4u);
  EXPECT_EQ(json_syntax_error_offset("{} {}"), 3u);  // text after the document
  EXPECT_EQ(json_syntax_error_offset(""), 0u);
  // Deep nesting costs no call stack.
  EXPECT_EQ(json_syntax_error_offset(std::string(1000000, '[') + std::string(1000000, ']')),
            std::nullopt);
}

TEST(JsonSyntax, PositionsAreLinesAndColumnsFromOne) {
  EXPECT_EQ(text_position("ab\ncd\nef", 4), "line 2, column 2 (byte 4)");
  EXPECT_EQ(text_position("ab", 0), "line 1, column 1 (byte 0)");
  EXPECT_EQ(json_error_position("{\n  \"a\": 1,\n}"), ": line 3, column 1 (byte 12)");
  EXPECT_EQ(json_error_position("{}"), "");
}

// One byte of a valid document deleted, doubled or replaced, many times over: where simdjson
// accepts the text the validator does, and where simdjson refuses it the validator names a
// position (the mutations keep the text ASCII and shallow; a number grown out of range is left
// aside, the one refusal that is not syntax).
TEST(JsonSyntax, AgreesWithSimdjsonOnMutatedDocuments) {
  const std::string base =
      R"({"schema_version": 1, "name": "x\"y", "runs": [{"a": 1.5, "b": [true, false, null]},)"
      R"( {"c": -2e3, "d": {}}, []], "t": "\u0041"})";
  const std::string alphabet = "{}[]:,\"\\ 0123456789.-+eEtrufalsnx\n";
  std::mt19937 rng(7);
  simdjson::dom::parser parser;
  int refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string t = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      const size_t at = rng() % t.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          t.erase(at, 1);
          break;
        case 1:
          t.insert(at, 1, t[at]);
          break;
        default:
          t[at] = c;
      }
    }
    simdjson::dom::element root;
    const simdjson::error_code err = parser.parse(t).get(root);
    // A number grown past a double's range is a value error, not syntax.
    if (err == simdjson::NUMBER_ERROR || err == simdjson::NUMBER_OUT_OF_RANGE) continue;
    const bool ok = err == simdjson::SUCCESS;
    refused += !ok;
    EXPECT_EQ(json_syntax_error_offset(t).has_value(), !ok) << t;
  }
  EXPECT_GT(refused, 10000);  // the mutations do break most documents
}

}  // namespace
