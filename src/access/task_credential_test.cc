#include "access/task_credential.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "access/permissions.h"

namespace paceline::access {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TaskClaim Claim(uint64_t job = 12, uint32_t instance = 0, uint32_t run = 3) {
  return TaskClaim{job, instance, run, kNow + absl::Minutes(10)};
}

TEST(TaskCredential, AMintedTokenVerifiesWithItsKeyUntilItExpires) {
  const std::string key = DeriveTaskKey("admin-token");
  ASSERT_EQ(key.size(), 32u);
  const std::string token = MintTaskToken(key, Claim());
  EXPECT_TRUE(IsTaskToken(token));
  EXPECT_TRUE(absl::StartsWith(token, "pltk_12_0_3_"));
  absl::StatusOr<TaskClaim> got = VerifyTaskToken(key, token, kNow);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Claim());
  // At its expiry and after: refused, saying so.
  absl::StatusOr<TaskClaim> late = VerifyTaskToken(key, token, kNow + absl::Minutes(10));
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(late.status().message(), HasSubstr("expired"));
}

TEST(TaskCredential, AnotherKeyOrAnyChangedFieldIsRefused) {
  const std::string key = DeriveTaskKey("admin-token");
  const std::string token = MintTaskToken(key, Claim());
  // Another cluster (another admin token) did not make it.
  absl::Status other = VerifyTaskToken(DeriveTaskKey("other"), token, kNow).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(other.message(), HasSubstr("wrong signature"));
  // Another job, instance, run or a later expiry with the same signature.
  const std::string sig = token.substr(token.rfind('_') + 1);
  const int64_t exp = absl::ToUnixSeconds(kNow + absl::Minutes(10));
  for (const std::string& forged :
       {absl::StrCat("pltk_13_0_3_", exp, "_", sig), absl::StrCat("pltk_12_1_3_", exp, "_", sig),
        absl::StrCat("pltk_12_0_4_", exp, "_", sig),
        absl::StrCat("pltk_12_0_3_", exp + 3600, "_", sig),
        absl::StrCat("pltk_012_0_3_", exp, "_", sig)}) {
    EXPECT_EQ(VerifyTaskToken(key, forged, kNow).status().code(),
              absl::StatusCode::kUnauthenticated)
        << forged;
  }
  // The signature is never repeated in a refusal.
  EXPECT_THAT(other.message(), ::testing::Not(HasSubstr(sig)));
}

TEST(TaskCredential, MalformedTokensSayWhatIsWrong) {
  const std::string key = DeriveTaskKey("k");
  EXPECT_THAT(VerifyTaskToken(key, "plt_abc", kNow).status().message(), HasSubstr("no pltk_"));
  EXPECT_THAT(VerifyTaskToken(key, "pltk_1_2_3", kNow).status().message(),
              HasSubstr("3 fields instead of 5"));
  EXPECT_THAT(VerifyTaskToken(key, "pltk_a_2_3_4_00", kNow).status().message(),
              HasSubstr("are numbers"));
  EXPECT_THAT(VerifyTaskToken(key, "pltk_1_2_3_4_00", kNow).status().message(),
              HasSubstr("64 lowercase hex"));
  // No key: nothing verifies.
  EXPECT_FALSE(VerifyTaskToken("", MintTaskToken("", Claim()), kNow).ok());
}

TEST(TaskCredential, ThePrincipalIsNamedAfterTheRun) {
  Principal p = TaskPrincipal(Claim(12, 4, 2));
  EXPECT_EQ(p.role, Role::kTask);
  EXPECT_EQ(p.user, "task:12/4/2");
  EXPECT_EQ(p.job, 12u);
  EXPECT_EQ(p.Describe(), "task:12/4/2 (the credential of task 12/4, run 2)");
  // No token of the store can be made with the task role.
  EXPECT_FALSE(RoleFromName("task").has_value());
  EXPECT_EQ(RoleName(Role::kTask), "task");
}

absl::Status Check(const Principal& who, absl::string_view route, Target target) {
  const Permission* p = FindPermission(route);
  EXPECT_NE(p, nullptr) << route;
  return p ? Authorize(who, *p, target) : absl::InternalError("no entry");
}

Target JobTarget(uint64_t job, std::string pool = "/ads") {
  return Target{
      .pool = std::move(pool), .owner = "alice", .object = absl::StrCat("job ", job), .job = job};
}

TEST(TaskCredential, ATaskReadsScalesAndKillsItsOwnJobOnly) {
  const Principal task = TaskPrincipal(Claim(12));
  for (absl::string_view route :
       {"paceline.v1.JobService/GetJob", "paceline.v1.JobService/UpdateJob",
        "paceline.v1.JobService/GetUpdate", "paceline.v1.TaskService/ListTasks",
        "paceline.v1.TaskService/GetTask", "paceline.v1.TaskService/GetTaskLogs",
        "paceline.v1.TaskService/KillTask", "paceline.v1.TaskService/Exec",
        "paceline.v1.JobService/GetEndpoints", "paceline.v1.JobService/WatchEndpoints"}) {
    EXPECT_TRUE(Check(task, route, JobTarget(12)).ok()) << route;
    absl::Status other = Check(task, route, JobTarget(13));
    EXPECT_EQ(other.code(), absl::StatusCode::kPermissionDenied) << route;
    EXPECT_THAT(other.message(), HasSubstr("job 13 is not the task's own job (job 12)"));
    // An unknown job (no id): refused.
    EXPECT_FALSE(Check(task, route, Target{.pool = "/"}).ok()) << route;
  }
  EXPECT_TRUE(Check(task, "paceline.v1.AccessService/WhoAmI", {}).ok());
}

TEST(TaskCredential, EverythingElseIsRefusedToATask) {
  const Principal task = TaskPrincipal(Claim(12));
  for (absl::string_view route :
       {"paceline.v1.JobService/CreateJob", "paceline.v1.JobService/KillJob",
        "paceline.v1.JobService/DeleteJob", "paceline.v1.JobService/RestartJob",
        "paceline.v1.JobService/QueryJobs", "paceline.v1.JobService/RollbackJob",
        "paceline.v1.PoolService/CreatePool", "paceline.v1.PoolService/ListPools",
        "paceline.v1.SecretService/PutSecret", "paceline.v1.SecretService/ListSecrets",
        "paceline.v1.AccessService/CreateToken", "paceline.v1.AccessService/ListAudit",
        "paceline.v1.HostService/ListHosts", "paceline.v1.HostService/DrainHost",
        "paceline.v1.AgentService/Connect", "paceline.v1.TaskService/ReleaseVolume",
        "GET /metrics"}) {
    absl::Status s = Check(task, route, JobTarget(12));
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << route;
    EXPECT_THAT(s.message(), HasSubstr("task:12/0/3 (the credential of task 12/0, run 3) may not"))
        << route;
  }
  // Public routes stay public.
  EXPECT_TRUE(Check(task, "GET /healthz", {}).ok());
  // Every route open to tasks is in the table.
  for (const Permission& p : Permissions()) {
    if (OpenToTasks(p.route)) {
      EXPECT_NE(p.need, Need::kAdmin) << p.route;
    }
  }
}

TEST(TaskCredential, ATaskChangesOnlyItsInstanceCount) {
  const Principal task = TaskPrincipal(Claim(12));
  EXPECT_TRUE(TaskMayUpdate(task, /*has_spec=*/false, /*has_instances=*/true).ok());
  absl::Status spec = TaskMayUpdate(task, true, true);
  EXPECT_EQ(spec.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(spec.message(), HasSubstr("only its job's instance count, not its spec"));
  EXPECT_THAT(TaskMayUpdate(task, false, false).message(), HasSubstr("instances: missing"));
  // Other callers are not limited by it.
  Principal alice{"alice", "", Role::kSubmitter, "/ads", "t"};
  EXPECT_TRUE(TaskMayUpdate(alice, true, false).ok());
}

}  // namespace
}  // namespace paceline::access
