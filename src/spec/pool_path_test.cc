#include "spec/pool_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::spec {
namespace {

using ::testing::HasSubstr;

TEST(PoolPathTest, AcceptsValidPaths) {
  for (absl::string_view p : {"/", "/ads", "/ads/training", "/a-b/c_d/e.f/0x"}) {
    EXPECT_TRUE(ValidatePoolPath(p).ok()) << p;
  }
}

TEST(PoolPathTest, RejectsInvalidPathsWithReason) {
  EXPECT_THAT(ValidatePoolPath("").message(), HasSubstr("must start with '/'"));
  EXPECT_THAT(ValidatePoolPath("ads").message(), HasSubstr("must start with '/'"));
  EXPECT_THAT(ValidatePoolPath("/ads/").message(), HasSubstr("must not end with '/'"));
  EXPECT_THAT(ValidatePoolPath("/ads//x").message(), HasSubstr("empty segment"));
  EXPECT_THAT(ValidatePoolPath("/ads/.x").message(), HasSubstr("letter or a digit"));
  EXPECT_THAT(ValidatePoolPath("/ads/a b").message(), HasSubstr("only letters"));
  EXPECT_THAT(ValidatePoolPath("/" + std::string(65, 'a')).message(), HasSubstr("longer than"));
  EXPECT_EQ(ParentPath("/ads/training"), "/ads");
  EXPECT_EQ(ParentPath("/ads"), "/");
  EXPECT_EQ(BaseName("/ads/training"), "training");
  EXPECT_EQ(ChildPoolPath("/", "ads"), "/ads");
  EXPECT_EQ(ChildPoolPath("/ads", "x"), "/ads/x");
}

}  // namespace
}  // namespace paceline::spec
