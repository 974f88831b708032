#include "spec/did_you_mean.h"

#include <array>

#include <gtest/gtest.h>

namespace paceline {
namespace {

constexpr std::array<absl::string_view, 5> kKeys = {"resources", "restart", "ports",
                                                    "max_running_time", "command"};

TEST(EditDistanceTest, CountsEdits) {
  EXPECT_EQ(EditDistance("", ""), 0);
  EXPECT_EQ(EditDistance("abc", ""), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("resoures", "resources"), 1);
  EXPECT_EQ(EditDistance("nmae", "name"), 1);  // a swap of neighbours
  EXPECT_EQ(EditDistance("ab", "ba"), 1);
}

TEST(ClosestMatchTest, SuggestsNearKeys) {
  EXPECT_EQ(ClosestMatch("resoures", kKeys), "resources");
  EXPECT_EQ(ClosestMatch("port", kKeys), "ports");
  EXPECT_EQ(ClosestMatch("comand", kKeys), "command");
}

TEST(ClosestMatchTest, FoldsCaseAndDashes) {
  EXPECT_EQ(ClosestMatch("Max-Running-Time", kKeys), "max_running_time");
  EXPECT_EQ(ClosestMatch("COMMAND", kKeys), "command");
}

TEST(ClosestMatchTest, NoSuggestionWhenFar) {
  EXPECT_EQ(ClosestMatch("xyz", kKeys), std::nullopt);
  EXPECT_EQ(ClosestMatch("", kKeys), std::nullopt);
  EXPECT_EQ(ClosestMatch("a", kKeys), std::nullopt);
  EXPECT_EQ(ClosestMatch(std::string(100, 'r'), kKeys), std::nullopt);
}

}  // namespace
}  // namespace paceline
