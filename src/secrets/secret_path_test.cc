#include "secrets/secret_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::secrets {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SecretPath, SplitsIntoPoolAndName) {
  absl::StatusOr<SecretPath> p = ParseSecretPath("/ads/training/db-password");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pool, "/ads/training");
  EXPECT_EQ(p->name, "db-password");
  EXPECT_EQ(p->full, "/ads/training/db-password");
  absl::StatusOr<SecretPath> root = ParseSecretPath("/token.v2");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->pool, "/");
  EXPECT_EQ(root->name, "token.v2");
  EXPECT_EQ(JoinSecretPath("/", "x"), "/x");
  EXPECT_EQ(JoinSecretPath("/ads", "x"), "/ads/x");
}

TEST(SecretPath, BadPathsSayWhatIsWrong) {
  EXPECT_THAT(ParseSecretPath("ads/x").status().message(), HasSubstr("expected <pool>/<name>"));
  EXPECT_THAT(ParseSecretPath("").status().message(), HasSubstr("expected <pool>/<name>"));
  for (absl::string_view bad : {"/ads/", "/", "/ads/Upper", "/ads/-x", "/ads/a b"}) {
    EXPECT_THAT(ParseSecretPath(bad).status().message(), HasSubstr("is not a secret name")) << bad;
  }
  EXPECT_THAT(ParseSecretPath("/ads//x").status().message(), HasSubstr("its pool"));
  EXPECT_THAT(ParseSecretPath("//x").status().message(), HasSubstr("an empty segment"));
  EXPECT_FALSE(CheckSecretName(std::string(64, 'a')).ok());
  EXPECT_TRUE(CheckSecretName(std::string(63, 'a')).ok());
}

TEST(SecretPath, ANameResolvesFromTheJobsPoolUpToTheRoot) {
  EXPECT_THAT(Candidates("/ads/x", "pw"), ElementsAre("/ads/x/pw", "/ads/pw", "/pw"));
  EXPECT_THAT(Candidates("/", "pw"), ElementsAre("/pw"));
}

}  // namespace
}  // namespace paceline::secrets
