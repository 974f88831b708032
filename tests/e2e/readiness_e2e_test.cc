// Readiness and the deregistration delay, with the real binaries (a master and one agent).
// - A 2-instance service whose readiness check is `test -f ready` (in its sandbox: a link to a
//   file the test creates and removes): `task list -o json` and `task get` show each instance's
//   readiness; an instance is not ready until its file exists, then ready; removing the file
//   makes it NOT_READY again without a restart (its run number stays).
// - `job kill` of a ready service with `deregistration_delay: 2s`: the task is KILLING from the
//   start, yet its process gets SIGTERM (it writes the time) only 2 s after the kill.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(resources:
  cpu: {reservation: 1, limit: 2}
  memory: {reservation: 1Gi}
)";

// Instance i is ready while FLAGS/ready-<i> exists: its sandbox's `ready` links there.
std::string ReadySpec(const std::string& flags) {
  return absl::StrCat(R"(name: web
type: service
instances: 2
task:
  command: "ln -s )",
                      flags, R"(/ready-$PACELINE_INSTANCE_ID ready; exec sleep 3600"
  resources: {cpu: 0.1, memory: 32Mi}
  kill_grace: 1s
  readiness: {command: "test -f ready", interval: 200ms, timeout: 5s, failures: 1}
)");
}

// One instance that is ready at once and writes the time (ns) it gets SIGTERM to FLAGS/termed.
std::string DelaySpec(const std::string& flags) {
  return absl::StrCat(R"(name: drain
type: service
instances: 1
task:
  command: "trap 'date +%s%N > )",
                      flags, R"(/termed; exit 0' TERM; while true; do sleep 0.05; done"
  resources: {cpu: 0.1, memory: 32Mi}
  kill_grace: 5s
  deregistration_delay: 2s
  readiness: {command: "true", interval: 200ms}
)");
}

class ReadinessE2E : public ::testing::Test {
 protected:
  ReadinessE2E() : c_({.agents = 1}) {}
  void SetUp() override {
    ASSERT_EQ(c_.Cli({"pool", "create", "/web", "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code,
              0);
    ASSERT_TRUE(c_.WaitForHosts(1));
    flags_ = MakeMarkersDir(c_.dir());
  }
  Json Tasks(uint64_t job) { return c_.CliJson({"task", "list", std::to_string(job)})["tasks"]; }
  Json Task(uint64_t job, int instance) {
    return c_.CliJson({"task", "get", absl::StrCat(job, "/", instance)})["task"];
  }
  // Waits until every instance of `job` is RUNNING with the given readiness ("" = any).
  bool WaitReadiness(uint64_t job, const std::map<int, std::string>& want) {
    return WaitFor(
        [&] {
          Json tasks = Tasks(job);
          for (const auto& [instance, readiness] : want) {
            bool seen = false;
            for (const Json& t : tasks) {
              if (t.value("instance", -1) != instance) continue;
              seen = t.value("state", "") == "RUNNING" && t.value("readiness", "") == readiness;
            }
            if (!seen) return false;
          }
          return true;
        },
        absl::Seconds(30));
  }
  void SetReady(int instance, bool ready) {
    const std::string path = absl::StrCat(flags_, "/ready-", instance);
    if (ready) {
      std::ofstream(path).put('x');
    } else {
      std::filesystem::remove(path);
    }
  }

  TestCluster c_;
  std::string flags_;
};

TEST_F(ReadinessE2E, AnInstanceIsReadyOnlyWhileItsCheckPassesAndIsNeverRestartedForIt) {
  const uint64_t job = c_.CreateJob("/web", ReadySpec(flags_));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitReadiness(job, {{0, "NOT_READY"}, {1, "NOT_READY"}})) << Tasks(job).dump();
  // Not ready until its file exists, however long it runs.
  const absl::Time hold = absl::Now() + absl::Seconds(1);
  while (absl::Now() < hold) {
    for (const Json& t : Tasks(job)) EXPECT_NE(t.value("readiness", ""), "READY") << t.dump();
  }
  EXPECT_EQ(Task(job, 0).value("readiness", ""), "NOT_READY");

  SetReady(0, true);
  ASSERT_TRUE(WaitReadiness(job, {{0, "READY"}, {1, "NOT_READY"}})) << Tasks(job).dump();
  SetReady(1, true);
  ASSERT_TRUE(WaitReadiness(job, {{0, "READY"}, {1, "READY"}})) << Tasks(job).dump();
  Json zero = Task(job, 0);
  EXPECT_EQ(zero.value("readiness", ""), "READY") << zero.dump();
  const int run = zero["run"].get<int>();
  RunResult get = c_.Cli({"task", "get", absl::StrCat(job, "/0")});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_THAT(get.out, HasSubstr("readiness: READY"));
  RunResult table = c_.Cli({"task", "list", std::to_string(job)});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const std::string header = table.out.substr(0, table.out.find('\n'));
  EXPECT_THAT(absl::AsciiStrToUpper(header), HasSubstr(" READY ")) << table.out;

  // The file goes: NOT_READY, still the same run, and it stays running.
  SetReady(0, false);
  ASSERT_TRUE(WaitReadiness(job, {{0, "NOT_READY"}, {1, "READY"}})) << Tasks(job).dump();
  const absl::Time later = absl::Now() + absl::Seconds(1);
  while (absl::Now() < later) {
    Json t = Task(job, 0);
    EXPECT_EQ(t.value("state", ""), "RUNNING") << t.dump();
    EXPECT_EQ(t["run"].get<int>(), run) << t.dump();
  }
  SetReady(0, true);
  ASSERT_TRUE(WaitReadiness(job, {{0, "READY"}, {1, "READY"}})) << Tasks(job).dump();
  EXPECT_EQ(Task(job, 0)["run"].get<int>(), run);
}

TEST_F(ReadinessE2E, AKilledServiceGetsSigtermOnlyAfterItsDeregistrationDelay) {
  const uint64_t job = c_.CreateJob("/web", DelaySpec(flags_));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitReadiness(job, {{0, "READY"}})) << Tasks(job).dump();
  const std::string termed = flags_ + "/termed";
  const absl::Time killed = absl::Now();
  RunResult kill = c_.Cli({"job", "kill", std::to_string(job)});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  // KILLING from the start (it left the endpoints), while the process is left alone.
  Json t = Task(job, 0);
  EXPECT_EQ(t.value("state", ""), "KILLING") << t.dump();
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(termed).empty(); }, absl::Seconds(30)))
      << Tasks(job).dump();
  int64_t ns = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(termed)), &ns))
      << ReadFile(termed);
  const absl::Duration waited = absl::FromUnixNanos(ns) - killed;
  EXPECT_GE(waited, absl::Seconds(2));
  EXPECT_LT(waited, absl::Seconds(8)) << "SIGTERM long after the delay";
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j.value("state", "") == "KILLED"; }, absl::Seconds(30)))
      << Tasks(job).dump();
  Json end = Task(job, 0);
  EXPECT_EQ(end.value("state", ""), "KILLED") << end.dump();
}

}  // namespace
}  // namespace paceline::e2e
