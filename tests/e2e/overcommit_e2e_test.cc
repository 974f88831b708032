// End to end: overcommit on real processes. An agent whose cores are all allocated to sleeping
// regular tasks runs a revocable task on that idle capacity once its usage reports arrive;
// regular work that needs the capacity back has the revocable task revoked at once, and
// `paceline task get` says why.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
description: overcommit end-to-end tests
resources:
  cpu:    {reservation: 2, limit: 6}
  memory: {reservation: 1Gi}
)";

Json TaskGet(TestCluster& c, uint64_t job, uint32_t instance) {
  RunResult r = c.Cli({"task", "get", absl::StrCat(job, "/", instance), "-o", "json"});
  if (r.exit_code != 0) return Json();
  Json j = Json::parse(r.out, nullptr, false);
  return j.is_discarded() ? Json() : j;
}

std::string StateOf(TestCluster& c, uint64_t job, uint32_t instance) {
  Json j = TaskGet(c, job, instance);
  return j.is_null() ? "" : j["task"].value("state", "");
}

bool WaitForState(TestCluster& c, uint64_t job, uint32_t instance, const std::string& state) {
  return WaitFor([&] { return StateOf(c, job, instance) == state; }, absl::Seconds(30));
}

TEST(OvercommitE2E, RevocableTaskRunsOnIdleCapacityUntilRegularWorkReclaimsIt) {
  TestCluster c({.agents = 1});  // 2 cores, usage reported every second
  ASSERT_EQ(c.Cli({"pool", "create", "/oc", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  // Every core allocated to tasks that sleep.
  uint64_t idle = c.CreateJob("/oc", R"(
name: idle
instances: 2
task:
  command: "exec sleep 600"
  resources: {cpu: 1, memory: 64Mi}
)");
  ASSERT_GT(idle, 0u);
  ASSERT_TRUE(WaitForState(c, idle, 0, "RUNNING"));
  ASSERT_TRUE(WaitForState(c, idle, 1, "RUNNING"));

  // 1.5 cores of best-effort work: no core is unallocated, but about 2 are idle.
  uint64_t best_effort = c.CreateJob("/oc", R"(
name: best-effort
instances: 1
sla: {revocable: true}
task:
  command: "exec sleep 600"
  resources: {cpu: 1.5, memory: 64Mi}
)");
  ASSERT_GT(best_effort, 0u);
  ASSERT_TRUE(WaitForState(c, best_effort, 0, "RUNNING")) << TaskGet(c, best_effort, 0).dump(2);
  Json hosts = c.CliJson({"host", "list"});
  ASSERT_EQ(hosts["hosts"].size(), 1u);
  EXPECT_EQ(TaskGet(c, best_effort, 0)["task"]["host"], c.agent_name(0));
  // `host list` shows the revocable part of the allocation and the slack it runs on.
  const Json& h = hosts["hosts"][0];
  EXPECT_EQ(h["revocable_allocated"]["cpu_milli"], "1500") << h.dump();
  EXPECT_GT(std::stoll(h["slack"]["cpu_milli"].get<std::string>()), 1000) << h.dump();
  EXPECT_THAT(c.Cli({"host", "list"}).out, HasSubstr("(revocable 1.5 cpu"));

  // A core comes free and regular work takes it: beside 2 regular cores of which 1 is idle,
  // 1.5 revocable cores no longer fit. The revocable task is revoked, and says why.
  ASSERT_EQ(c.Cli({"task", "kill", absl::StrCat(idle, "/1")}).exit_code, 0);
  ASSERT_TRUE(WaitForState(c, idle, 1, "KILLED"));
  uint64_t regular = c.CreateJob("/oc", R"(
name: regular
instances: 1
task:
  command: "exec sleep 600"
  resources: {cpu: 1, memory: 64Mi}
)");
  ASSERT_GT(regular, 0u);
  Json revoked;
  ASSERT_TRUE(WaitFor(
      [&] {
        Json j = TaskGet(c, best_effort, 0);
        if (j.is_null() || !j.contains("runs")) return false;
        for (const Json& run : j["runs"]) {
          if (run.value("reason", "") == "REVOKED") revoked = run;
        }
        return !revoked.is_null();
      },
      absl::Seconds(30)))
      << TaskGet(c, best_effort, 0).dump(2);
  EXPECT_EQ(revoked["run"], 1);
  EXPECT_EQ(revoked["final_state"], "KILLED");
  EXPECT_THAT(revoked.value("message", ""),
              HasSubstr(absl::StrCat("capacity reclaimed for regular work placed on host ",
                                     c.agent_name(0))));
  EXPECT_THAT(revoked.value("message", ""), HasSubstr("cpu: regular 2 + revocable 1.5 held"));
  ASSERT_TRUE(WaitForState(c, regular, 0, "RUNNING"));
  RunResult text = c.Cli({"task", "get", absl::StrCat(best_effort, "/0")});
  EXPECT_THAT(text.out, HasSubstr("REVOKED")) << text.out;
  EXPECT_THAT(text.out, HasSubstr("capacity reclaimed for regular work")) << text.out;
  for (uint64_t job : {idle, best_effort, regular}) {
    EXPECT_EQ(c.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  }
}

}  // namespace
}  // namespace paceline::e2e
