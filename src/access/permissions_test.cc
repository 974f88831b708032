#include "access/permissions.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace paceline::access {
namespace {

using ::testing::HasSubstr;

TEST(Permissions, EachRouteHasOneEntry) {
  std::set<absl::string_view> seen;
  for (const Permission& p : Permissions()) {
    EXPECT_TRUE(seen.insert(p.route).second) << p.route << " twice";
    const bool http = p.route.find(' ') != absl::string_view::npos;
    if (!http) {
      EXPECT_NE(p.need, Need::kViaRpc) << p.route;
    }
    EXPECT_FALSE(p.action.empty()) << p.route;
  }
}

Principal Who(std::string user, Role role, std::string scope, std::string group = "") {
  return Principal{std::move(user), std::move(group), role, std::move(scope), "t"};
}

absl::Status Check(const Principal& who, absl::string_view route, Target target) {
  const Permission* p = FindPermission(route);
  EXPECT_NE(p, nullptr) << route;
  return p ? Authorize(who, *p, target) : absl::InternalError("no entry");
}

TEST(Permissions, ADenialNamesTheUserTheActionAndThePool) {
  absl::Status s = Check(Who("alice", Role::kSubmitter, "/ads"), "paceline.v1.JobService/KillJob",
                         {.pool = "/search", .owner = "alice"});
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "alice (submitter on /ads) may not kill jobs in /search");
}

TEST(Permissions, ASubmitterActsOnItsOwnJobsAndItsGroupsBelowItsScope) {
  const Principal alice = Who("alice", Role::kSubmitter, "/ads", "ads-team");
  const std::string kill = "paceline.v1.JobService/KillJob";
  EXPECT_TRUE(Check(alice, kill, {.pool = "/ads", .owner = "alice"}).ok());
  EXPECT_TRUE(Check(alice, kill, {.pool = "/ads/train", .owner = "alice"}).ok());
  EXPECT_TRUE(Check(alice, kill, {.pool = "/ads", .owner = "bob", .owner_group = "ads-team"}).ok());
  absl::Status s =
      Check(alice, kill, {.pool = "/ads", .owner = "carol", .owner_group = "x", .object = "job 7"});
  EXPECT_EQ(
      s.message(),
      "alice (submitter on /ads) may not kill jobs in /ads: job 7 belongs to carol (group x)");
  EXPECT_FALSE(Check(alice, kill, {.pool = "/adsx", .owner = "alice"}).ok());
  // Without a group, another group's empty group does not match.
  EXPECT_FALSE(
      Check(Who("dan", Role::kSubmitter, "/ads"), kill, {.pool = "/ads", .owner = "x"}).ok());
  // Submitting and reading below the scope; not managing pools.
  EXPECT_TRUE(Check(alice, "paceline.v1.JobService/CreateJob", {.pool = "/ads/x"}).ok());
  EXPECT_TRUE(Check(alice, "paceline.v1.JobService/GetJob", {.pool = "/ads/x"}).ok());
  EXPECT_FALSE(Check(alice, "paceline.v1.JobService/GetJob", {.pool = "/search"}).ok());
  // An unknown job is "/": only a credential for the whole tree passes (then: NOT_FOUND).
  EXPECT_FALSE(Check(alice, "paceline.v1.JobService/GetJob", {.pool = "/"}).ok());
  EXPECT_TRUE(
      Check(Who("v", Role::kViewer, "/"), "paceline.v1.JobService/GetJob", {.pool = "/"}).ok());
  EXPECT_FALSE(Check(alice, "paceline.v1.PoolService/UpdatePool", {.pool = "/ads"}).ok());
}

TEST(Permissions, APoolAdminManagesItsSubtreeOnly) {
  const Principal p = Who("pat", Role::kPoolAdmin, "/a");
  EXPECT_TRUE(Check(p, "paceline.v1.PoolService/CreatePool", {.pool = "/a/b"}).ok());
  EXPECT_TRUE(Check(p, "paceline.v1.PoolService/UpdatePool", {.pool = "/a/b"}).ok());
  EXPECT_TRUE(Check(p, "paceline.v1.PoolService/DeletePool", {.pool = "/a/b/c"}).ok());
  // Not the root of its scope: its share and limits are its parent's holder's to set.
  EXPECT_THAT(Check(p, "paceline.v1.PoolService/UpdatePool", {.pool = "/a"}).message(),
              HasSubstr("pat (pool-admin on /a) may not update pools in /a: the root of"));
  EXPECT_FALSE(Check(p, "paceline.v1.PoolService/DeletePool", {.pool = "/a"}).ok());
  EXPECT_FALSE(Check(p, "paceline.v1.PoolService/CreatePool", {.pool = "/b"}).ok());
  EXPECT_TRUE(Check(p, "paceline.v1.JobService/KillJob", {.pool = "/a/b", .owner = "zed"}).ok());
  EXPECT_FALSE(Check(p, "paceline.v1.HostService/DrainHost", {}).ok());
  EXPECT_FALSE(Check(p, "paceline.v1.AccessService/CreateToken", {}).ok());
}

TEST(Permissions, AViewerOnlyReads) {
  const Principal v = Who("vic", Role::kViewer, "/");
  EXPECT_TRUE(Check(v, "paceline.v1.JobService/GetJob", {.pool = "/x"}).ok());
  EXPECT_TRUE(Check(v, "paceline.v1.HostService/ListHosts", {}).ok());
  EXPECT_TRUE(Check(v, "GET /metrics", {}).ok());
  EXPECT_FALSE(Check(v, "paceline.v1.JobService/CreateJob", {.pool = "/x"}).ok());
  EXPECT_FALSE(Check(v, "paceline.v1.JobService/KillJob", {.pool = "/x", .owner = "vic"}).ok());
}

TEST(Permissions, AgentsAndClientsAreKeptApart) {
  const Principal admin = Who("root", Role::kAdmin, "/");
  const Principal agent = Who("agent", Role::kAgent, "host-1");
  const std::string connect = "paceline.v1.AgentService/Connect";
  EXPECT_THAT(Check(admin, connect, {.host = "host-1"}).message(),
              HasSubstr("only an agent credential"));
  EXPECT_TRUE(Check(agent, connect, {.host = "host-1"}).ok());
  EXPECT_EQ(Check(agent, connect, {.host = "host-2"}).message(),
            "the agent credential for host-1 may not connect as host host-2");
  EXPECT_TRUE(Check(Who("agent", Role::kAgent, "*"), connect, {.host = "host-2"}).ok());
  EXPECT_FALSE(Check(agent, "paceline.v1.PoolService/ListPools", {}).ok());
  EXPECT_FALSE(Check(agent, "GET /metrics", {}).ok());
  EXPECT_TRUE(Check(agent, "GET /healthz", {}).ok());
  EXPECT_TRUE(Check(admin, "paceline.v1.AccessService/ListAudit", {}).ok());
}

TEST(Permissions, ScopesAreSubtrees) {
  EXPECT_TRUE(InScope("/", "/a"));
  EXPECT_TRUE(InScope("/a", "/a"));
  EXPECT_TRUE(InScope("/a", "/a/b/c"));
  EXPECT_FALSE(InScope("/a", "/ab"));
  EXPECT_FALSE(InScope("/a/b", "/a"));
  EXPECT_FALSE(InScope("/a", ""));
}

}  // namespace
}  // namespace paceline::access
