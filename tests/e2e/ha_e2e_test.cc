// Several masters on one PostgreSQL database: a standby takes over when the leader is killed,
// and a leader paused past its lease is fenced and steps down when it wakes up.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/postgres_util.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// Three masters, two agents, 2,000 short tasks: the leader is killed with SIGKILL half-way. A
// standby leads within 10 s, the job completes, and no instance ever ran twice at once.
TEST(HaE2E, AStandbyTakesOverWhenTheLeaderIsKilled) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster c({.agents = 2, .store = pg->url(), .masters = 3, .lease = "3s"});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  std::string markers = MakeMarkersDir(c.dir());
  constexpr int kInstances = 2000;
  uint64_t job = c.CreateJob("/e2e", MarkedJob("failover", kInstances, markers, "sleep 0.05"));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return TasksIn(j, "SUCCEEDED") >= kInstances / 2; },
      absl::Seconds(180)));
  int old_leader = c.current_master();
  // The standbys follow the store: their copy is at most a few reads old.
  std::vector<std::string> all_masters = {"--addr", "",      "--token", c.token(),
                                          "info",   "--all", "-o",      "json"};
  for (int i = 0; i < 3; ++i) {
    all_masters[1] += (i > 0 ? "," : "") + c.master_address(i);
  }
  Json before = Json::parse(RunPaceline(all_masters).out, nullptr, false);
  ASSERT_TRUE(before.is_array() && before.size() == 3u) << before.dump();
  for (int i = 0; i < 3; ++i) {
    if (i == old_leader) {
      EXPECT_EQ(before[i]["replication_lag_ms"], -1) << before.dump();
    } else {
      EXPECT_EQ(before[i]["role"], "standby") << before.dump();
      EXPECT_GE(before[i]["replication_lag_ms"].get<int64_t>(), 0) << before.dump();
      EXPECT_LT(before[i]["replication_lag_ms"].get<int64_t>(), 5000) << before.dump();
    }
  }
  c.master().Signal(SIGKILL);
  absl::Time killed = absl::Now();
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
  int leader = c.FindLeader(absl::Seconds(30));
  absl::Duration took = absl::Now() - killed;
  std::cout << "failover: master " << leader << " leads " << absl::FormatDuration(took)
            << " after the leader was killed" << std::endl;
  ASSERT_GE(leader, 0);
  EXPECT_NE(leader, old_leader);
  EXPECT_LT(took, absl::Seconds(10));
  // It took over from the state it followed, reading only the last changes.
  std::string out = c.master(leader).Output();
  size_t at = out.find("took over from the followed state");
  ASSERT_NE(at, std::string::npos) << out;
  std::cout << out.substr(at, out.find('\n', at) - at) << std::endl;
  // Each master says what it is: the new leader, and the remaining standby pointing to it.
  Json info = c.CliJson({"info"});
  EXPECT_EQ(info["role"], "leader") << info.dump();
  EXPECT_GE(info["term"].get<uint64_t>(), 2u);
  int standby = 3 - leader - old_leader;
  EXPECT_TRUE(WaitFor(
      [&] {
        RunResult r = RunPaceline(
            {"--addr", c.master_address(standby), "--token", c.token(), "info", "-o", "json"});
        Json j = Json::parse(r.out, nullptr, false);
        return !j.is_discarded() && j["role"] == "standby" &&
               j["leader"] == c.master_address(leader);
      },
      absl::Seconds(10)));
  // And so do their metrics.
  std::string term = absl::StrCat("paceline_master_term ", info["term"].get<uint64_t>(), "\n");
  std::string led = c.HttpGet("/metrics");
  EXPECT_THAT(led, HasSubstr("paceline_master_leader 1\n"));
  EXPECT_THAT(led, HasSubstr(term));
  std::string follows = c.HttpGet("/metrics", standby);
  EXPECT_THAT(follows, HasSubstr("paceline_master_leader 0\n"));
  EXPECT_THAT(follows, HasSubstr(term));
  EXPECT_THAT(follows, HasSubstr("paceline_master_lease_age_seconds "));
  EXPECT_THAT(follows, HasSubstr("paceline_master_replication_lag_seconds "));
  // `info --all` shows the killed master as unreachable and the others as they are.
  Json after = Json::parse(RunPaceline(all_masters).out, nullptr, false);
  ASSERT_TRUE(after.is_array() && after.size() == 3u) << after.dump();
  EXPECT_TRUE(after[old_leader].contains("error")) << after.dump();
  EXPECT_EQ(after[leader]["role"], "leader") << after.dump();
  EXPECT_EQ(after[standby]["leader"], c.master_address(leader)) << after.dump();
  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "240s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  Json got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(TasksIn(got["job"], "SUCCEEDED"), static_cast<uint32_t>(kInstances));
  ExpectRunsNeverOverlap(markers, kInstances);
}

// The leader is stopped (SIGSTOP) until a standby leads, then continued: it finds its lease
// gone, writes nothing (its commits are fenced), steps down and sends callers to the leader.
TEST(HaE2E, APausedLeaderIsFencedAndStepsDown) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  // The agent needs a keepalive timeout to leave the stopped leader: the new leader waits for
  // it longer than that before it would declare the host lost.
  TestCluster c(
      {.agents = 1, .host_timeout = "30s", .store = pg->url(), .masters = 2, .lease = "3s"});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  uint64_t service = c.CreateJob("/e2e", R"(
name: sleepers
instances: 4
task:
  command: "sleep 600"
  resources: {cpu: 0.05, memory: 8Mi}
)");
  ASSERT_TRUE(c.WaitForJob(
      service, [](const Json& j) { return TasksIn(j, "RUNNING") == 4; }, absl::Seconds(60)));
  int paused = c.current_master();
  c.master(paused).Signal(SIGSTOP);
  // The paused master does not answer at all; the other one leads once the lease ran out.
  int leader = -1;
  ASSERT_TRUE(WaitFor(
      [&] {
        leader = c.FindLeader(absl::Seconds(1));
        return leader >= 0 && leader != paused;
      },
      absl::Seconds(30)));
  // It knows the host from the store, and waits for its agent to register: the host is
  // RECONNECTING (not connected, nothing is sent to it) until then, never LOST meanwhile.
  EXPECT_TRUE(WaitFor(
      [&] {
        Json hosts = c.CliJson({"host", "list"});
        if (hosts["hosts"].size() != 1u) return false;
        const Json& h = hosts["hosts"][0];
        EXPECT_TRUE(h["state"] == "RECONNECTING" || h["state"] == "UP") << h.dump();
        EXPECT_EQ(h["connected"].get<bool>(), h["state"] == "UP") << h.dump();
        return h["state"] == "UP";
      },
      absl::Seconds(30)));
  // The new leader takes changes.
  uint64_t after = c.CreateJob("/e2e", R"(
name: after
instances: 1
task: {command: "true", resources: {cpu: 0.05, memory: 8Mi}}
)");
  ASSERT_GT(after, 0u);
  c.master(paused).Signal(SIGCONT);
  // The old leader notices within a renewal period or two, and says who leads now.
  EXPECT_TRUE(WaitFor(
      [&] {
        return c.master(paused).Output().find("stepping down from term") != std::string::npos;
      },
      absl::Seconds(15)))
      << c.master(paused).Output();
  // Calls to it are refused with the leader's address.
  RunResult refused;
  EXPECT_TRUE(WaitFor(
      [&] {
        refused =
            RunPaceline({"--addr", c.master_address(paused), "--token", c.token(), "pool", "list"});
        return refused.err.find("leader: " + c.master_address(leader)) != std::string::npos;
      },
      absl::Seconds(15)))
      << refused.err;
  EXPECT_NE(refused.exit_code, 0);
  // Having stepped down, it follows the store again as a standby.
  EXPECT_TRUE(WaitFor(
      [&] {
        RunResult r = RunPaceline(
            {"--addr", c.master_address(paused), "--token", c.token(), "info", "-o", "json"});
        Json j = Json::parse(r.out, nullptr, false);
        return !j.is_discarded() && j["role"] == "standby" && j["replication_lag_ms"] >= 0;
      },
      absl::Seconds(15)));
  RunResult wait = c.Cli({"job", "wait", std::to_string(after), "--timeout", "60s"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
  // The service's tasks were adopted by the new leader and still run their first run: the old
  // leader neither killed nor restarted anything.
  Json tasks = c.CliJson({"task", "list", std::to_string(service)});
  ASSERT_EQ(tasks["tasks"].size(), 4u);
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "RUNNING") << t.dump();
    EXPECT_EQ(t["run"], 1) << t.dump();
  }
  // An agent that knows only the deposed master follows its refusal to the leader.
  int joined = c.AddAgent(c.master_address(paused));
  EXPECT_TRUE(c.WaitForHosts(2, absl::Seconds(30))) << c.agent(joined).Output();
  EXPECT_THAT(c.agent(joined).Output(),
              HasSubstr("following the leader at " + c.master_address(leader)));
  // A kill after the failover reaches every task.
  RunResult kill = c.Cli({"job", "kill", std::to_string(service)});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  EXPECT_TRUE(c.WaitForJob(
      service, [](const Json& j) { return TasksIn(j, "KILLED") == 4; }, absl::Seconds(60)));
}

// With the default lease, a leader stalled for a second at a time (a loaded host, a long pause
// of the process) keeps leading: the standby never takes over, the term stays, nothing restarts.
TEST(HaE2E, ALeaderStalledForASecondKeepsLeadingWithTheDefaultLease) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster c(
      {.agents = 1, .host_timeout = "30s", .store = pg->url(), .masters = 2, .lease = ""});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  const uint64_t service = c.CreateJob("/e2e", R"(
name: sleepers
instances: 2
task:
  command: "sleep 600"
  resources: {cpu: 0.05, memory: 8Mi}
)");
  ASSERT_TRUE(c.WaitForJob(
      service, [](const Json& j) { return TasksIn(j, "RUNNING") == 2; }, absl::Seconds(60)));
  const int leader = c.FindLeader(absl::Seconds(30));
  ASSERT_GE(leader, 0);
  const int64_t term = JsonInt(c.CliJson({"info"})["term"]);
  ASSERT_GT(term, 0);
  for (int i = 0; i < 3; ++i) {
    c.master(leader).Signal(SIGSTOP);
    absl::SleepFor(absl::Seconds(1));
    c.master(leader).Signal(SIGCONT);
    absl::SleepFor(absl::Seconds(1));
  }
  EXPECT_EQ(c.FindLeader(absl::Seconds(10)), leader);
  EXPECT_EQ(JsonInt(c.CliJson({"info"})["term"]), term);
  EXPECT_THAT(c.master(leader).Output(), ::testing::Not(HasSubstr("stepping down")));
  Json tasks = c.CliJson({"task", "list", std::to_string(service)});
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "RUNNING") << t.dump();
    EXPECT_EQ(t["run"], 1) << t.dump();
  }
}

}  // namespace
}  // namespace paceline::e2e
