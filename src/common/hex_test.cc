#include "common/hex.h"

#include <gtest/gtest.h>

#include "common/random_bytes.h"

namespace paceline {
namespace {

TEST(IsLowerHex, AcceptsOnlyLowercaseHexDigits) {
  EXPECT_TRUE(IsLowerHex("0123456789abcdef"));
  EXPECT_TRUE(IsLowerHex(""));
  EXPECT_FALSE(IsLowerHex("0A"));
  EXPECT_FALSE(IsLowerHex("g"));
  EXPECT_FALSE(IsLowerHex("ab cd"));
}

TEST(RandomBytes, HasTheAskedSizeAndDiffers) {
  absl::StatusOr<std::string> a = RandomBytes(16);
  absl::StatusOr<std::string> b = RandomBytes(16);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 16u);
  EXPECT_NE(*a, *b);
  absl::StatusOr<std::string> hex = RandomHex(8);
  ASSERT_TRUE(hex.ok());
  EXPECT_EQ(hex->size(), 16u);
  EXPECT_TRUE(IsLowerHex(*hex));
}

}  // namespace
}  // namespace paceline
