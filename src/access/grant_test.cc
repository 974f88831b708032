#include "access/grant.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::access {
namespace {

using ::testing::HasSubstr;

TEST(Grant, FillsTheRecordAndDefaultsTheScope) {
  absl::StatusOr<records::TokenRecord> r = CheckGrant({"alice", "ads-team", "submitter", "", "ci"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->user, "alice");
  EXPECT_EQ(r->group, "ads-team");
  EXPECT_EQ(r->role, "submitter");
  EXPECT_EQ(r->scope, "/");
  EXPECT_EQ(r->name, "ci");
  EXPECT_EQ(CheckGrant({"bob", "", "viewer", "/ads/train", ""})->scope, "/ads/train");
}

TEST(Grant, AnAgentIsScopedToItsHost) {
  EXPECT_EQ(CheckGrant({"host-1", "", "agent", "", ""})->scope, "host-1");
  EXPECT_EQ(CheckGrant({"*", "", "agent", "", ""})->scope, "*");
  EXPECT_THAT(CheckGrant({"host-1", "", "agent", "/ads", ""}).status().message(),
              HasSubstr("scope: an agent's credential is scoped to its host"));
  EXPECT_FALSE(CheckGrant({"*", "", "viewer", "", ""}).ok());
}

TEST(Grant, EachBadFieldIsNamed) {
  struct Case {
    GrantRequest req;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"alice", "", "root", "", ""}, "role: 'root' is no role; expected one of admin,"},
           {{"", "", "viewer", "", ""}, "user: '' is not 1 to 64"},
           {{"a b", "", "viewer", "", ""}, "user: 'a b'"},
           {{std::string(65, 'a'), "", "viewer", "", ""}, "user:"},
           {{"alice", "g h", "viewer", "", ""}, "group: 'g h'"},
           {{"alice", "", "viewer", "ads", ""}, "scope: 'ads' does not start with /"},
           {{"alice", "", "viewer", "/ads/", ""}, "scope: '/ads/' has an empty segment"},
           {{"alice", "", "viewer", "//", ""}, "empty segment"},
           {{"alice", "", "viewer", "/a*b", ""}, "no pool name has"},
           {{"alice", "", "viewer", "/", std::string(65, 'n')}, "name: longer than 64"},
           {{"alice", "", "viewer", "/", "a\nb"}, "name: has a character"},
           {{"root", "", "admin", "/ads", ""}, "scope: an admin acts on the whole tree"},
           {{"host-1", "g", "agent", "", ""}, "group: an agent's credential has no group"},
       }) {
    absl::StatusOr<records::TokenRecord> r = CheckGrant(c.req);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(c.says));
  }
}

}  // namespace
}  // namespace paceline::access
