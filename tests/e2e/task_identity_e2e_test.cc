// Task credentials end to end, with TLS on: a controller task reads its token file and scales
// its own job with the CLI; the same credential is refused on another job and outside its scope,
// every use is in the audit log as the task; the master renews the file while the run lives,
// and the credential is refused once the run has ended.

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 2}\n  memory: {reservation: 1Gi}\n";

constexpr char kOther[] = R"(
name: other
instances: 1
task:
  command: sleep 600
  resources: {cpu: 0.1, memory: 32Mi}
)";

// Instance 0 is the controller: it scales its job to 3, then tries another job (straight to
// UpdateJob: --version) and the pools.
// The others just run.
constexpr char kDriver[] = R"(
name: driver
instances: 1
task:
  command: sleep 600
  resources: {cpu: 0.1, memory: 32Mi}
instance_overrides:
  0:
    controller: true
    command: >-
      stat -c 'token mode=%a user=%U' "$PACELINE_TASK_TOKEN_FILE";
      echo "addr=$PACELINE_ADDR ca=${PACELINE_CA:+set}";
      PACELINE job update "$PACELINE_JOB_ID" --instances 3 && echo SCALED;
      PACELINE job update OTHER_JOB --instances 2 --version 1 || echo OTHER-REFUSED;
      PACELINE pool list || echo POOLS-REFUSED;
      sleep 600
)";

class TaskIdentityE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(c_.WaitForHosts(1));
    RunResult r = c_.Cli({"pool", "create", "/a", "-f", c_.WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  RunResult CliAs(const std::string& token, const std::vector<std::string>& args) {
    std::vector<std::string> full = {"--addr", c_.master_address(0), "--token", token,
                                     "--ca",   c_.ca_file()};
    full.insert(full.end(), args.begin(), args.end());
    return RunPaceline(full, c_.dir());
  }

  std::string TokenFile(uint64_t job, uint32_t instance, uint32_t run) {
    return absl::StrCat(c_.dir(), "/", c_.agent_name(0), "/sandboxes/", job, "_", instance, "_",
                        run, "/identity/token");
  }

  // The audit records of `user` (JSON lines of `audit export`).
  std::vector<Json> AuditOf(const std::string& user) {
    RunResult r = c_.Cli({"audit", "export", "--user", user});
    std::vector<Json> out;
    for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
      out.push_back(Json::parse(line));
    }
    return out;
  }

  // Whether the audit log has a record of `user` for `action` with `outcome`.
  bool Audited(const std::string& user, const std::string& action, const std::string& outcome) {
    return WaitFor(
        [&] {
          for (const Json& e : AuditOf(user)) {
            if (e["action"] == action && e["outcome"] == outcome) return true;
          }
          return false;
        },
        absl::Seconds(10));
  }

  TestCluster c_{
      ClusterOptions{.agents = 1, .master_args = {"--task-credential-ttl", "6s"}, .tls = true}};
};

TEST_F(TaskIdentityE2E, AControllerScalesItsOwnJobAndNothingElse) {
  const uint64_t other = c_.CreateJob("/a", kOther);
  ASSERT_GT(other, 0u);
  std::string spec =
      absl::StrReplaceAll(kDriver, {{"PACELINE job", absl::StrCat(PacelineBinary(), " job")},
                                    {"PACELINE pool", absl::StrCat(PacelineBinary(), " pool")},
                                    {"OTHER_JOB", std::to_string(other)}});
  const uint64_t job = c_.CreateJob("/a", spec);
  ASSERT_GT(job, 0u);
  const std::string who = absl::StrCat("task:", job, "/0/1");

  // The controller grew its job to 3 running instances.
  ASSERT_TRUE(WaitFor(
      [&] {
        Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
        int running = 0;
        for (const Json& t : tasks["tasks"]) running += t["state"] == "RUNNING";
        return running == 3;
      },
      absl::Seconds(60)));
  ASSERT_TRUE(WaitFor(
      [&] {
        return c_.Cli({"task", "logs", absl::StrCat(job, "/0")}).out.find("POOLS-REFUSED") !=
               std::string::npos;
      },
      absl::Seconds(30)));
  RunResult out = c_.Cli({"task", "logs", absl::StrCat(job, "/0")});
  RunResult err = c_.Cli({"task", "logs", "--stderr", absl::StrCat(job, "/0")});
  EXPECT_THAT(out.out, HasSubstr("token mode=400 user=nobody"));
  EXPECT_THAT(out.out, HasSubstr(absl::StrCat("addr=", c_.master_address(0), " ca=set")));
  EXPECT_THAT(out.out, HasSubstr("SCALED"));
  EXPECT_THAT(out.out, HasSubstr("OTHER-REFUSED"));
  EXPECT_THAT(err.out,
              HasSubstr(absl::StrCat("job ", other, " is not the task's own job (job ", job, ")")));
  EXPECT_THAT(err.out, HasSubstr(who + " (the credential of task"));
  // The other job kept its one instance.
  Json other_tasks = c_.CliJson({"task", "list", std::to_string(other)});
  EXPECT_EQ(other_tasks["tasks"].size(), 1u);

  // Every use is in the audit log as the task: the scale, the refused scale of the other job,
  // and its reads (job get before the update).
  EXPECT_TRUE(Audited(who, "JobService.UpdateJob", "OK"));
  EXPECT_TRUE(Audited(who, "JobService.UpdateJob", "PERMISSION_DENIED"));
  EXPECT_TRUE(Audited(who, "JobService.GetJob", "OK"));
  EXPECT_TRUE(Audited(who, "PoolService.ListPools", "PERMISSION_DENIED"));
  bool named_other = false;
  for (const Json& e : AuditOf(who)) {
    named_other |=
        e["outcome"] == "PERMISSION_DENIED" && e["target"] == absl::StrCat("job ", other);
  }
  EXPECT_TRUE(named_other);

  // A task that is not a controller and has no identity gets no credential.
  EXPECT_FALSE(std::filesystem::exists(TokenFile(job, 1, 1)));

  // The master renews the credential (ttl 6s: every 2s); the new one works, and so does the old
  // one until it expires.
  const std::string first = ReadFile(TokenFile(job, 0, 1));
  ASSERT_FALSE(first.empty());
  std::string renewed;
  ASSERT_TRUE(WaitFor(
      [&] {
        renewed = ReadFile(TokenFile(job, 0, 1));
        return !renewed.empty() && renewed != first;
      },
      absl::Seconds(15)));
  RunResult get = CliAs(renewed, {"job", "get", std::to_string(job)});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  // Scaling down through it: the highest instance goes.
  RunResult down = CliAs(renewed, {"job", "update", std::to_string(job), "--instances", "2"});
  EXPECT_EQ(down.exit_code, 0) << down.err;
  // Changing the spec is not scaling.
  RunResult respec = CliAs(
      renewed, {"job", "update", std::to_string(job), "-f", c_.WriteFile("other.yaml", kOther)});
  EXPECT_NE(respec.exit_code, 0);
  EXPECT_THAT(respec.err, HasSubstr("changes only its job's instance count, not its spec"));

  // The run ends: the credential is refused from then on, and the refusal is audited as the
  // task.
  RunResult kill = c_.Cli({"task", "kill", absl::StrCat(job, "/0")});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  ASSERT_TRUE(WaitFor(
      [&] {
        Json t = c_.CliJson({"task", "get", absl::StrCat(job, "/0")});
        return t["task"]["state"] == "KILLED";
      },
      absl::Seconds(30)));
  RunResult after = CliAs(renewed, {"job", "get", std::to_string(job)});
  EXPECT_NE(after.exit_code, 0);
  EXPECT_THAT(after.err, HasSubstr("run 1 has ended"));
  EXPECT_TRUE(Audited(who, "JobService.GetJob", "UNAUTHENTICATED"));
  // The finished run's sandbox holds no credential.
  EXPECT_FALSE(std::filesystem::exists(TokenFile(job, 0, 1)));
}

// A master that restarts finds the runs with an identity launched before it (it indexes them
// again from the store) and keeps renewing their credentials.
TEST_F(TaskIdentityE2E, ARestartedMasterKeepsRenewingTheRunsItDidNotLaunch) {
  const std::string spec = absl::StrReplaceAll(
      kOther, {{"name: other", "name: idle"}, {"task:\n", "task:\n  identity: true\n"}});
  const uint64_t job = c_.CreateJob("/a", spec);
  ASSERT_GT(job, 0u);
  std::string token;
  ASSERT_TRUE(WaitFor(
      [&] {
        token = ReadFile(TokenFile(job, 0, 1));
        return !token.empty();
      },
      absl::Seconds(30)));
  c_.master().Signal(SIGKILL);
  ASSERT_TRUE(c_.master().WaitExit(absl::Seconds(10)).has_value());
  c_.StartMaster();
  // What the old master sent last has landed by now: the next change is the new master's
  // (ttl 6s: a renewal every 2s), and the new token works.
  token = ReadFile(TokenFile(job, 0, 1));
  std::string renewed;
  ASSERT_TRUE(WaitFor(
      [&] {
        renewed = ReadFile(TokenFile(job, 0, 1));
        return !renewed.empty() && renewed != token;
      },
      absl::Seconds(20)));
  RunResult get = CliAs(renewed, {"job", "get", std::to_string(job)});
  EXPECT_EQ(get.exit_code, 0) << get.err;
}

TEST_F(TaskIdentityE2E, AForgedOrForeignCredentialIsRefused) {
  // A credential with a made-up signature, and one of another cluster's key.
  RunResult forged =
      CliAs(absl::StrCat("pltk_1_0_1_4102444800_", std::string(64, 'a')), {"job", "get", "1"});
  EXPECT_NE(forged.exit_code, 0);
  EXPECT_THAT(forged.err, HasSubstr("wrong signature"));
}

}  // namespace
}  // namespace paceline::e2e
