// Upgrades (docs/operations.md "Upgrades"): agents restarted one host at a time onto another
// build keep every task running — each run re-adopted, none restarted, none lost — and
// `paceline version --all` shows what each agent runs.
//
// "Another build" is a copy of the binary and its task wrapper in a directory of their own, as
// a package upgrade installs them; each agent is stopped (SIGTERM, as its unit stops it) and
// started again from the new path on the same work dir.

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 6}
  memory: {reservation: 1Gi}
)";

// One task per host: 1.5 of each agent's 2 cpus.
constexpr char kJob[] = R"(
name: long
type: batch
instances: 3
task:
  command: "sleep 600"
  resources: {cpu: 1.5, memory: 32Mi}
)";

struct TaskRun {
  std::string state, host;
  uint32_t run = 0;
  int64_t started_ms = 0;
  bool operator==(const TaskRun&) const = default;
};

std::map<uint32_t, TaskRun> Runs(TestCluster& c, uint64_t job) {
  std::map<uint32_t, TaskRun> out;
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) {
    out[t.value("instance", 0u)] = {t.value("state", ""), t.value("host", ""), t.value("run", 0u),
                                    JsonInt(t.value("started_at_unix_ms", Json()))};
  }
  return out;
}

// The host names `version --all` lists as connected, with their agents' version and commit.
std::map<std::string, std::string> AgentVersions(TestCluster& c) {
  std::map<std::string, std::string> out;
  Json v = c.CliJson({"version", "--all"});
  for (const Json& a : v["agents"]) {
    if (a.value("connected", false)) {
      out[a.value("host", "")] = absl::StrCat(a.value("version", ""), " ", a.value("commit", ""));
    }
  }
  return out;
}

// Whether `host`'s agent registered (or beat) since `since_ms`: the restarted one, not the old.
bool HeardFromSince(TestCluster& c, const std::string& host, int64_t since_ms) {
  Json hosts = c.CliJson({"host", "list"});
  for (const Json& h : hosts["hosts"]) {
    if (h.value("name", "") == host) {
      return h.value("connected", false) &&
             JsonInt(h.value("last_seen_unix_ms", Json())) > since_ms;
    }
  }
  return false;
}

TEST(UpgradeE2E, AgentsRestartedOneByOneOntoAnotherBuildKeepEveryTaskRunning) {
  TestCluster c({.agents = 3});
  ASSERT_EQ(c.Cli({"pool", "create", "/up", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t job = c.CreateJob("/up", kJob);
  std::map<uint32_t, TaskRun> before;
  ASSERT_TRUE(WaitFor(
      [&] {
        before = Runs(c, job);
        if (before.size() != 3) return false;
        for (const auto& [i, r] : before) {
          if (r.state != "RUNNING") return false;
        }
        return true;
      },
      absl::Seconds(60)));
  std::set<std::string> hosts;
  for (const auto& [i, r] : before) hosts.insert(r.host);
  ASSERT_EQ(hosts.size(), 3u) << "one task per host";

  // The new build: the binary and the task wrapper it starts tasks with, beside each other.
  const std::string next = c.dir() + "/next";
  std::filesystem::create_directories(next);
  const std::filesystem::path built = PacelineBinary();
  std::filesystem::copy_file(built, next + "/paceline");
  std::filesystem::copy_file(built.parent_path() / "paceline-task-wrapper",
                             next + "/paceline-task-wrapper");

  Json info = c.CliJson({"info"});
  const std::string expected =
      absl::StrCat(info.value("version", ""), " ", info.value("commit", ""));
  std::map<std::string, std::string> versions = AgentVersions(c);
  ASSERT_EQ(versions.size(), 3u) << c.Cli({"version", "--all", "-o", "json"}).out;
  for (const auto& [host, v] : versions) EXPECT_EQ(v, expected) << host;

  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(c.agent_name(i));
    c.agent(i).Signal(SIGTERM);
    ASSERT_TRUE(c.agent(i).WaitExit(absl::Seconds(30)).has_value());
    const int64_t restarted_ms = absl::ToUnixMillis(absl::Now());
    c.StartAgent(i, "", next + "/paceline");
    ASSERT_TRUE(WaitFor([&] { return HeardFromSince(c, c.agent_name(i), restarted_ms); },
                        absl::Seconds(30)));
    // It runs the new build, and registered again with every task it had.
    std::error_code ec;
    EXPECT_EQ(std::filesystem::read_symlink(absl::StrCat("/proc/", c.agent(i).pid(), "/exe"), ec),
              std::filesystem::path(next + "/paceline"));
    // Nothing was restarted, lost or moved: the same runs, started when they were.
    EXPECT_EQ(Runs(c, job), before);
  }
  // A while later still the same runs (a lost run would have been noticed by now).
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Runs(c, job), before);
  versions = AgentVersions(c);
  EXPECT_EQ(versions.size(), 3u);
  for (const auto& [host, v] : versions) EXPECT_EQ(v, expected) << host;

  // The table shows the CLI, the master and the three agents.
  RunResult table = c.Cli({"version", "--all"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (int i = 0; i < 3; ++i) EXPECT_THAT(table.out, testing::HasSubstr(c.agent_name(i)));
  EXPECT_THAT(table.out, testing::HasSubstr("master"));
}

}  // namespace
}  // namespace paceline::e2e
