// End to end: a job of roles on a real master and real agents. Each instance runs its role's
// task (its command, its variables, its override's fields), and `job update --instances` grows
// and shrinks the job by its last role while the others keep their numbers.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 2, limit: 6}
  memory: {reservation: 1Gi}
)";

// A driver and two workers; instance 2's override changes a variable.
constexpr char kJob[] = R"(
name: roles
type: service
task:
  command: echo "$ROLE $PACELINE_INSTANCE_ID $EXTRA"; exec sleep 600
  resources: {cpu: 0.1, memory: 32Mi}
  env: {ROLE: worker, EXTRA: base}
  kill_grace: 1s
roles:
  - name: driver
    instances: 1
    task:
      command: echo "driver $PACELINE_INSTANCE_ID [$EXTRA]"; exec sleep 600
      env: {EXTRA: null}
  - name: worker
    instances: 2
instance_overrides:
  2:
    env: {EXTRA: odd}
)";

class RolesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(c_.WaitForHosts(3));
    RunResult pool = c_.Cli({"pool", "create", "/e2e", "-f", c_.WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(pool.exit_code, 0) << pool.err;
  }

  bool Running(uint64_t job, int n) {
    return c_.WaitForJob(
        job, [n](const Json& j) { return j["task_counts"].value("RUNNING", 0) == n; },
        absl::Seconds(60));
  }

  // Waits until instance `i`'s log holds `text`.
  bool LogHas(uint64_t job, int i, const std::string& text) {
    std::string task = absl::StrCat(job, "/", i);
    bool found = WaitFor(
        [&] {
          return absl::StrContains(c_.Cli({"task", "logs", task}).out, text);
        },
        absl::Seconds(30));
    EXPECT_TRUE(found) << task << ": " << c_.Cli({"task", "logs", task}).out;
    return found;
  }

  TestCluster c_;
};

TEST_F(RolesE2E, EachInstanceRunsItsRolesTaskAndTheJobGrowsByItsLastRole) {
  const uint64_t job = c_.CreateJob("/e2e", kJob);
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(Running(job, 3)) << c_.Cli({"task", "list", std::to_string(job)}).out;
  LogHas(job, 0, "driver 0 []");
  LogHas(job, 1, "worker 1 base");
  LogHas(job, 2, "worker 2 odd");

  Json got = c_.CliJson({"job", "get", std::to_string(job)});
  EXPECT_THAT(got.value("spec_yaml", ""), HasSubstr("  - name: worker\n    instances: 2\n"));
  // The roles where a user looks: the job's (with each role's first instance), each instance's
  // in the API and in `task list`'s ROLE column; no gang, so no gang attempt.
  ASSERT_EQ(got["roles"].size(), 2u) << got;
  EXPECT_EQ(got["roles"][1]["name"], "worker");
  EXPECT_EQ(got["roles"][1]["instances"], 2);
  EXPECT_EQ(got["roles"][1]["first_instance"], 1);
  EXPECT_FALSE(got.contains("gang")) << got;
  EXPECT_THAT(c_.Cli({"job", "get", std::to_string(job)}).out,
              HasSubstr("\nroles: driver 0, worker 1-2\n"));
  Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
  ASSERT_EQ(tasks["tasks"].size(), 3u);
  EXPECT_EQ(tasks["tasks"][0]["role"], "driver");
  EXPECT_EQ(tasks["tasks"][2]["role"], "worker");
  RunResult list = c_.Cli({"task", "list", std::to_string(job)});
  EXPECT_THAT(list.out, ::testing::ContainsRegex("^TASK +ROLE +RUN +STATE ")) << list.out;
  EXPECT_THAT(list.out, ::testing::ContainsRegex(absl::StrCat(job, "/0 +driver +1 +RUNNING")));
  EXPECT_THAT(list.out, ::testing::ContainsRegex(absl::StrCat(job, "/2 +worker +1 +RUNNING")));
  EXPECT_THAT(c_.Cli({"task", "get", absl::StrCat(job, "/1")}).out, HasSubstr("\nrole: worker\n"));

  // Two more instances: the worker role grows; the driver keeps instance 0.
  RunResult grow = c_.Cli({"job", "update", std::to_string(job), "--instances", "5"});
  ASSERT_EQ(grow.exit_code, 0) << grow.err;
  ASSERT_TRUE(Running(job, 5)) << c_.Cli({"task", "list", std::to_string(job)}).out;
  LogHas(job, 3, "worker 3 base");
  LogHas(job, 4, "worker 4 base");
  got = c_.CliJson({"job", "get", std::to_string(job)});
  EXPECT_THAT(got.value("spec_yaml", ""), HasSubstr("  - name: worker\n    instances: 4\n"));
  EXPECT_THAT(got.value("spec_yaml", ""), HasSubstr("  - name: driver\n    instances: 1\n"));

  // The last role cannot shrink to nothing: the driver alone is refused, naming why.
  RunResult shrink = c_.Cli({"job", "update", std::to_string(job), "--instances", "1"});
  EXPECT_NE(shrink.exit_code, 0);
  EXPECT_THAT(shrink.err, HasSubstr("instances: 1 would leave the last role, worker, without "
                                    "instances (the roles before it have 1)"));
  EXPECT_EQ(c_.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
}

}  // namespace
}  // namespace paceline::e2e
