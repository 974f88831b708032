// Upgrades (docs/operations.md "Upgrades"): agents restarted one host at a time onto another
// build keep every task running — each run re-adopted, none restarted, none lost — and
// `paceline version --all` shows what each agent and master runs; the masters of an HA set roll
// first, the standby before the leader, with the same outcome; and a roll cut off half-way (a
// new binary copied only in part) leaves a cluster of both builds that works, the old binary
// still running where the new one could not start.
//
// "Another build" is `paceline-next` (tests/CMakeLists.txt): the same code stamped version
// 0.1.0+next and commit "next", copied with the task wrapper into a directory of their own, as a
// package upgrade installs them; each daemon is stopped (SIGTERM, as its unit stops it) and
// started again from the new path on the same work or data dir.

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
#include "tests/e2e/postgres_util.h"

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

// What `version --all` shows of the other build.
constexpr char kNext[] = "0.1.0+next next";

// Installs the other build as DIR/NAME/paceline with the task wrapper beside it; returns the
// binary's path. `bytes` > 0: only the binary's first `bytes` (a copy cut off half-way).
std::string InstallNextBuild(TestCluster& c, const std::string& name, uintmax_t bytes = 0) {
  namespace fs = std::filesystem;
  const std::string dir = c.dir() + "/" + name;
  fs::create_directories(dir);
  fs::copy_file(PACELINE_NEXT_BINARY, dir + "/paceline");
  fs::copy_file(fs::path(PacelineBinary()).parent_path() / "paceline-task-wrapper",
                dir + "/paceline-task-wrapper");
  if (bytes > 0) fs::resize_file(dir + "/paceline", bytes);
  return dir + "/paceline";
}

// "VERSION COMMIT" of a master (`info`, `version --all`).
std::string Stamp(const Json& j) {
  return absl::StrCat(j.value("version", ""), " ", j.value("commit", ""));
}

// Every task of `job` RUNNING, one per host: their runs.
std::map<uint32_t, TaskRun> AllRunning(TestCluster& c, uint64_t job, size_t n) {
  std::map<uint32_t, TaskRun> runs;
  EXPECT_TRUE(WaitFor(
      [&] {
        runs = Runs(c, job);
        if (runs.size() != n) return false;
        for (const auto& [i, r] : runs) {
          if (r.state != "RUNNING") return false;
        }
        return true;
      },
      absl::Seconds(60)));
  std::set<std::string> hosts;
  for (const auto& [i, r] : runs) hosts.insert(r.host);
  EXPECT_EQ(hosts.size(), n) << "one task per host";
  return runs;
}

// Stops agent i and starts it from `binary`; true once it registered again.
bool RestartAgentOn(TestCluster& c, int i, const std::string& binary) {
  c.agent(i).Signal(SIGTERM);
  if (!c.agent(i).WaitExit(absl::Seconds(30)).has_value()) return false;
  const int64_t restarted_ms = absl::ToUnixMillis(absl::Now());
  c.StartAgent(i, "", binary);
  return WaitFor([&] { return HeardFromSince(c, c.agent_name(i), restarted_ms); },
                 absl::Seconds(30));
}

// A short job of `n` instances that must land one per host: SUCCEEDED.
bool ShortJobRunsOnEveryHost(TestCluster& c, int n) {
  const uint64_t job = c.CreateJob(
      "/up", absl::StrCat("name: short\ntype: batch\ninstances: ", n,
                          "\ntask:\n  command: \"true\"\n  resources: {cpu: 0.4, memory: 16Mi}\n"));
  return c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED"; }, absl::Seconds(60));
}

TEST(UpgradeE2E, AgentsRestartedOneByOneOntoAnotherBuildKeepEveryTaskRunning) {
  TestCluster c({.agents = 3});
  ASSERT_EQ(c.Cli({"pool", "create", "/up", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t job = c.CreateJob("/up", kJob);
  const std::map<uint32_t, TaskRun> before = AllRunning(c, job, 3);
  const std::string next = InstallNextBuild(c, "next");
  const std::string old = Stamp(c.CliJson({"info"}));
  ASSERT_NE(old, kNext);
  std::map<std::string, std::string> versions = AgentVersions(c);
  ASSERT_EQ(versions.size(), 3u) << c.Cli({"version", "--all", "-o", "json"}).out;
  for (const auto& [host, v] : versions) EXPECT_EQ(v, old) << host;

  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(c.agent_name(i));
    ASSERT_TRUE(RestartAgentOn(c, i, next));
    // It runs the new build, and registered again with every task it had.
    std::error_code ec;
    EXPECT_EQ(std::filesystem::read_symlink(absl::StrCat("/proc/", c.agent(i).pid(), "/exe"), ec),
              std::filesystem::path(next));
    // Nothing was restarted, lost or moved: the same runs, started when they were.
    EXPECT_EQ(Runs(c, job), before);
    // Half-way, both builds: the agents done so far run the new one.
    versions = AgentVersions(c);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(versions[c.agent_name(k)], k <= i ? kNext : old) << k;
  }
  // A while later still the same runs (a lost run would have been noticed by now).
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Runs(c, job), before);
  EXPECT_TRUE(ShortJobRunsOnEveryHost(c, 3));

  // The table shows the CLI, the master and the three agents.
  RunResult table = c.Cli({"version", "--all"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (int i = 0; i < 3; ++i) EXPECT_THAT(table.out, testing::HasSubstr(c.agent_name(i)));
  EXPECT_THAT(table.out, testing::HasSubstr("0.1.0+next"));
  EXPECT_THAT(table.out, testing::HasSubstr("master"));
}

// The masters of an HA set on PostgreSQL, then the agents: the standby first, then the leader,
// whose stop hands the lease to the upgraded standby; the old leader comes back on the new build
// as a standby. No task is restarted, and the cluster serves throughout.
TEST(UpgradeE2E, AnHaSetRollsStandbyFirstThenLeaderThenAgentsAndNoTaskRestarts) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster c({.agents = 2, .store = pg->url(), .masters = 2, .lease = "3s"});
  ASSERT_EQ(c.Cli({"pool", "create", "/up", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code, 0);
  const uint64_t job = c.CreateJob("/up", absl::StrCat(R"(
name: long
type: batch
instances: 2
task:
  command: "sleep 600"
  resources: {cpu: 1.5, memory: 32Mi}
)"));
  const std::map<uint32_t, TaskRun> before = AllRunning(c, job, 2);
  const std::string next = InstallNextBuild(c, "next");
  const int first = c.FindLeader(absl::Seconds(30));
  ASSERT_GE(first, 0);
  const int standby = 1 - first;
  // `version --all` over both masters: each one's build and role.
  auto masters = [&] {
    std::map<int, std::string> out;
    RunResult r = RunPaceline({"--addr", c.master_address(0) + "," + c.master_address(1), "--token",
                               c.token(), "version", "--all", "-o", "json"});
    Json j = Json::parse(r.out, nullptr, false);
    if (j.is_discarded()) return out;
    for (int i = 0; i < 2; ++i) {
      out[i] = absl::StrCat(Stamp(j["masters"][i]), " ", j["masters"][i].value("role", ""));
    }
    return out;
  };
  const std::string old = Stamp(c.CliJson({"info"}));

  // 1. The standby: it comes back a standby on the new build; the leader still leads.
  c.master(standby).Signal(SIGTERM);
  ASSERT_TRUE(c.master(standby).WaitExit(absl::Seconds(30)).has_value());
  c.StartMaster(standby, next);
  EXPECT_TRUE(WaitFor(
      [&] {
        auto m = masters();
        return m[standby] == absl::StrCat(kNext, " standby") &&
               m[first] == absl::StrCat(old, " leader");
      },
      absl::Seconds(30)))
      << ::testing::PrintToString(masters());
  EXPECT_EQ(Runs(c, job), before);

  // 2. The leader: its stop hands the lease to the upgraded standby; it comes back a standby.
  c.master(first).Signal(SIGTERM);
  ASSERT_TRUE(c.master(first).WaitExit(absl::Seconds(30)).has_value());
  ASSERT_EQ(c.FindLeader(absl::Seconds(30)), standby);
  c.StartMaster(first, next);
  EXPECT_TRUE(WaitFor(
      [&] {
        auto m = masters();
        return m[standby] == absl::StrCat(kNext, " leader") &&
               m[first] == absl::StrCat(kNext, " standby");
      },
      absl::Seconds(30)))
      << ::testing::PrintToString(masters());
  ASSERT_TRUE(c.WaitForHosts(2));
  EXPECT_EQ(Runs(c, job), before);

  // 3. The agents, one by one.
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(c.agent_name(i));
    ASSERT_TRUE(RestartAgentOn(c, i, next));
    EXPECT_EQ(Runs(c, job), before);
  }
  for (const auto& [host, v] : AgentVersions(c)) EXPECT_EQ(v, kNext) << host;
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Runs(c, job), before);
  EXPECT_TRUE(ShortJobRunsOnEveryHost(c, 2));
}

// A roll cut off half-way: one host runs the new build; on the next, the new binary was copied
// only in part and does not start, so the old binary is started again there (as its unit's
// rollback does) and adopts its tasks. Both builds serve together: nothing restarted, and new
// work runs on every host.
TEST(UpgradeE2E, ARollCutOffHalfWayLeavesBothBuildsServingAndTheOldStillRunning) {
  TestCluster c({.agents = 3});
  ASSERT_EQ(c.Cli({"pool", "create", "/up", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t job = c.CreateJob("/up", kJob);
  const std::map<uint32_t, TaskRun> before = AllRunning(c, job, 3);
  const std::string old = Stamp(c.CliJson({"info"}));
  ASSERT_TRUE(RestartAgentOn(c, 0, InstallNextBuild(c, "next")));

  // Host 1: the new binary is a third of itself, and does not start.
  const std::string cut =
      InstallNextBuild(c, "cut", std::filesystem::file_size(PACELINE_NEXT_BINARY) / 3);
  c.agent(1).Signal(SIGTERM);
  ASSERT_TRUE(c.agent(1).WaitExit(absl::Seconds(30)).has_value());
  c.StartAgent(1, "", cut);
  std::optional<int> failed = c.agent(1).WaitExit(absl::Seconds(30));
  ASSERT_TRUE(failed.has_value());
  EXPECT_NE(*failed, 0);
  // Its tasks ran on meanwhile; the old binary, started again, adopts them.
  const int64_t back_ms = absl::ToUnixMillis(absl::Now());
  c.StartAgent(1, "", PacelineBinary());
  ASSERT_TRUE(
      WaitFor([&] { return HeardFromSince(c, c.agent_name(1), back_ms); }, absl::Seconds(30)));
  EXPECT_EQ(Runs(c, job), before);

  std::map<std::string, std::string> versions = AgentVersions(c);
  EXPECT_EQ(versions[c.agent_name(0)], kNext);
  EXPECT_EQ(versions[c.agent_name(1)], old);
  EXPECT_EQ(versions[c.agent_name(2)], old);
  EXPECT_TRUE(ShortJobRunsOnEveryHost(c, 3));
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Runs(c, job), before);
}

}  // namespace
}  // namespace paceline::e2e
