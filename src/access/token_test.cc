#include "access/token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::access {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Token, AGeneratedTokenParsesAndMatchesOnlyItsOwnSecret) {
  absl::StatusOr<NewToken> t = GenerateToken();
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<TokenParts> parts = ParseToken(t->token);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->id, t->record.id);
  EXPECT_TRUE(SecretMatches(t->record, parts->secret));
  std::string other = parts->secret;
  other[0] = other[0] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(SecretMatches(t->record, other));
  // The record never holds the secret.
  EXPECT_THAT(t->record.hash, Not(HasSubstr(parts->secret)));
  EXPECT_THAT(t->record.salt, Not(HasSubstr(parts->secret)));
  // Two tokens differ in id, secret and salt.
  absl::StatusOr<NewToken> u = GenerateToken();
  ASSERT_TRUE(u.ok());
  EXPECT_NE(u->record.id, t->record.id);
  EXPECT_NE(u->record.salt, t->record.salt);
  EXPECT_NE(u->token, t->token);
}

TEST(Token, MalformedTokensSayWhatIsWrongWithoutRepeatingThem) {
  const std::string secret(64, 'a');
  const std::string id(16, '0');
  struct Case {
    std::string token;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"abc", "starts with plt_"},
           {"plt_" + id + secret, "second _ is missing"},
           {"plt_" + id + "x_" + secret, "id is 16 lowercase hex digits"},
           {"plt_" + std::string(16, 'A') + "_" + secret, "id is 16"},
           {"plt_" + id + "_" + secret + "0", "secret is 64 lowercase hex digits"},
           {"plt_" + id + "_" + std::string(64, 'g'), "secret is 64"},
           {"plt_" + id + "_", "secret is 64"},
       }) {
    absl::StatusOr<TokenParts> p = ParseToken(c.token);
    ASSERT_FALSE(p.ok()) << c.token;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(), HasSubstr(c.says)) << c.token;
    EXPECT_THAT(p.status().message(), Not(HasSubstr("gggg")));
  }
}

TEST(Token, BearerHeaders) {
  EXPECT_EQ(*BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(*BearerToken("bearer  abc "), "abc");
  for (const char* bad : {"", "Bearer", "Bearer ", "Basic abc", "Bearerabc", "Bearer    "}) {
    absl::StatusOr<absl::string_view> t = BearerToken(bad);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kUnauthenticated) << bad;
  }
}

TEST(Token, RevokedAndExpiredTokensAreRefusedFromTheirTime) {
  const absl::Time now = absl::FromUnixSeconds(1'000'000);
  records::TokenRecord r;
  r.id = "0123456789abcdef";
  EXPECT_TRUE(Usable(r, now).ok());
  r.expires_at = now + absl::Seconds(1);
  EXPECT_TRUE(Usable(r, now).ok());
  EXPECT_THAT(Usable(r, now + absl::Seconds(1)).message(), HasSubstr("expired at"));
  r.revoked_at = now;
  absl::Status s = Usable(r, now);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(s.message(), HasSubstr("token 0123456789abcdef was revoked"));
}

}  // namespace
}  // namespace paceline::access
