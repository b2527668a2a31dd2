// The nearest known name to a mistyped one, and no guess when none is near.
#include <gtest/gtest.h>

#include "common/did_you_mean.hpp"

namespace {

using lumos::did_you_mean;
using lumos::edit_distance;
using lumos::nearest_name;

TEST(DidYouMean, EditDistanceCountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("h100", "h100"), 0u);
  EXPECT_EQ(edit_distance("H100", "h100"), 0u);      // case is not a typo
  EXPECT_EQ(edit_distance("serach", "search"), 1u);  // a swap is one typo
  EXPECT_EQ(edit_distance("spce", "spec"), 1u);
}

TEST(DidYouMean, SuggestsTheNearestName) {
  const std::vector<std::string> presets = {"gpt3-15b", "gpt3-175b", "llama3-70b", "llama3-8b"};
  EXPECT_EQ(nearest_name("gpt3-175", presets), "gpt3-175b");
  EXPECT_EQ(nearest_name("lama3-70b", presets), "llama3-70b");
  EXPECT_EQ(did_you_mean("--spce", {"--spec", "--seed"}), " (did you mean '--spec'?)");
}

TEST(DidYouMean, GuessesNothingWhenNoNameIsNear) {
  EXPECT_EQ(nearest_name("bloom-176b", {"gpt3-15b", "llama3-70b"}), "");
  EXPECT_EQ(did_you_mean("x", {"replay", "sweep"}), "");
  // A short name allows one edit only: "ab" is not a typo of "xyz".
  EXPECT_EQ(nearest_name("ab", {"xyz"}), "");
}

}  // namespace
