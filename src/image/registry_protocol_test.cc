#include "image/registry_protocol.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paceline::image {
namespace {

using ::testing::HasSubstr;

TEST(RegistryProtocolTest, ParsesABearerChallenge) {
  auto c = ParseAuthChallenge(
      R"(Bearer realm="https://auth.docker.io/token",service="registry.docker.io",)"
      R"(scope="repository:library/busybox:pull")");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scheme, "bearer");
  EXPECT_EQ(c->params["realm"], "https://auth.docker.io/token");
  EXPECT_EQ(c->params["service"], "registry.docker.io");
  EXPECT_EQ(c->params["scope"], "repository:library/busybox:pull");
}

TEST(RegistryProtocolTest, ParsesBasicTokensEscapesAndStopsAtTheNextChallenge) {
  auto c = ParseAuthChallenge(
      R"(  BASIC Realm = "a \"quoted\" realm" , charset=UTF-8, Bearer realm="x")");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scheme, "basic");
  EXPECT_EQ(c->params["realm"], "a \"quoted\" realm");
  EXPECT_EQ(c->params["charset"], "UTF-8");
  EXPECT_EQ(c->params.size(), 2u);
  EXPECT_FALSE(ParseAuthChallenge("").has_value());
  EXPECT_FALSE(ParseAuthChallenge("   ").has_value());
  auto bare = ParseAuthChallenge("Basic");
  ASSERT_TRUE(bare.has_value());
  EXPECT_TRUE(bare->params.empty());
}

TEST(RegistryProtocolTest, DescribesTheRegistrysErrorBody) {
  EXPECT_EQ(
      DescribeErrorBody(R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown",)"
                        R"("detail":{"Tag":"nope"}}]})"),
      "MANIFEST_UNKNOWN: manifest unknown");
  EXPECT_EQ(DescribeErrorBody(R"({"errors":[{"code":"DENIED"},{"code":"UNAUTHORIZED",)"
                              R"("message":"authentication required"}]})"),
            "DENIED; UNAUTHORIZED: authentication required");
  EXPECT_EQ(DescribeErrorBody("<html>\n502 Bad Gateway\n</html>"),
            "<html> 502 Bad Gateway </html>");
  EXPECT_EQ(DescribeErrorBody(""), "");
  std::string long_body(1000, 'x');
  EXPECT_EQ(DescribeErrorBody(long_body).size(), 203u);
}

TEST(RegistryProtocolTest, ParsesTokenResponses) {
  EXPECT_EQ(*ParseTokenResponse(R"({"token":"abc","expires_in":300})"), "abc");
  EXPECT_EQ(*ParseTokenResponse(R"({"access_token":"def"})"), "def");
  auto none = ParseTokenResponse(R"({"token":""})");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(none.status().message(), HasSubstr("without a token"));
  EXPECT_FALSE(ParseTokenResponse("not json").ok());
}

TEST(RegistryProtocolTest, MapsHttpStatusesToCanonicalCodes) {
  EXPECT_EQ(CodeForHttpStatus(401), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeForHttpStatus(403), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeForHttpStatus(404), absl::StatusCode::kNotFound);
  EXPECT_EQ(CodeForHttpStatus(429), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForHttpStatus(500), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForHttpStatus(503), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForHttpStatus(400), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeForHttpStatus(405), absl::StatusCode::kFailedPrecondition);
}

TEST(RegistryProtocolTest, MediaTypeOfDropsParameters) {
  EXPECT_EQ(MediaTypeOf(" Application/JSON; charset=utf-8"), "application/json");
  EXPECT_EQ(MediaTypeOf("application/vnd.oci.image.index.v1+json"),
            "application/vnd.oci.image.index.v1+json");
  EXPECT_EQ(MediaTypeOf(""), "");
}

}  // namespace
}  // namespace paceline::image
