// End to end: the host agent through the master — measured usage in `task get` / `host list`,
// health transitions, gang peer files (also for a member restarted alone), an agent killed and
// restarted under 20 running tasks, and 30 s during which the master does not answer while
// tasks finish.
//
// MasterUnreachableFor30sTakes40s is the slow one (~40 s): it stops the master for 30 s.

#include <signal.h>

#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
description: agent end-to-end tests
resources:
  cpu:    {reservation: 2, limit: 6}
  memory: {reservation: 1Gi}
)";

void CreatePool(TestCluster& c) {
  RunResult r = c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

Json TaskOf(TestCluster& c, uint64_t job, uint32_t instance) {
  RunResult r = c.Cli({"task", "get", absl::StrCat(job, "/", instance), "-o", "json"});
  if (r.exit_code != 0) return Json();
  Json j = Json::parse(r.out, nullptr, false);
  return j.is_discarded() ? Json() : j["task"];
}

// (run, state, reason) of every event of one instance.
std::vector<std::tuple<uint32_t, std::string, std::string>> Events(TestCluster& c, uint64_t job,
                                                                   uint32_t instance) {
  Json events = c.CliJson({"task", "events", absl::StrCat(job, "/", instance)});
  std::vector<std::tuple<uint32_t, std::string, std::string>> out;
  for (const Json& e : events["events"]) {
    out.emplace_back(e["run"].get<uint32_t>(), e["state"], e["reason"]);
  }
  return out;
}

bool IsTerminal(const std::string& s) {
  return s == "SUCCEEDED" || s == "FAILED" || s == "KILLED" || s == "LOST";
}

TEST(AgentE2E, MeasuredUsageShowsInTaskGetHostListAndMetrics) {
  TestCluster c({.agents = 1});
  CreatePool(c);
  // `tail` keeps the whole 60 MiB "line" in memory while it waits for the end of its input.
  uint64_t job = c.CreateJob("/e2e", R"(
name: hog
instances: 1
task:
  command: "(head -c 60M /dev/zero; sleep 600) | tail"
  resources: {cpu: 0.5, memory: 256Mi}
)");
  ASSERT_GT(job, 0u);
  Json task;
  bool measured = WaitFor(
      [&] {
        task = TaskOf(c, job, 0);
        return !task.is_null() && JsonInt(task["usage_at_unix_ms"]) > 0 &&
               JsonInt(task["used"]["memory_bytes"]) > (50 << 20);
      },
      absl::Seconds(30));
  ASSERT_TRUE(measured) << task.dump();
  EXPECT_EQ(task["state"], "RUNNING");

  RunResult get = c.Cli({"task", "get", absl::StrCat(job, "/0")});
  EXPECT_THAT(get.out, HasSubstr("uses: ")) << get.out;
  EXPECT_THAT(get.out, HasSubstr(" mem (at ")) << get.out;
  RunResult list = c.Cli({"task", "list", std::to_string(job)});
  EXPECT_THAT(list.out, HasSubstr("USED")) << list.out;
  EXPECT_THAT(list.out, HasSubstr("Mi mem")) << list.out;

  Json hosts = c.CliJson({"host", "list"});
  ASSERT_EQ(hosts["hosts"].size(), 1u);
  const Json& h = hosts["hosts"][0];
  EXPECT_GT(JsonInt(h["usage_at_unix_ms"]), 0) << h.dump();
  EXPECT_GT(JsonInt(h["used"]["memory_bytes"]), 0) << h.dump();
  EXPECT_GT(JsonInt(h["memory_total_bytes"]), JsonInt(h["used"]["memory_bytes"])) << h.dump();
  EXPECT_GT(JsonInt(h["tasks_used"]["memory_bytes"]), 50 << 20) << h.dump();
  RunResult table = c.Cli({"host", "list"});
  EXPECT_THAT(table.out, HasSubstr("USED")) << table.out;

  std::string metrics = c.HttpGet("/metrics");
  EXPECT_THAT(metrics, HasSubstr(absl::StrCat("paceline_host_used{host=\"", c.agent_name(0),
                                              "\",resource=\"memory\"} ")));
  // 256Mi asked, ~60Mi used: the rest is slack for revocable work.
  EXPECT_THAT(metrics, HasSubstr("paceline_allocated_unused{resource=\"memory\"} "));
  EXPECT_THAT(metrics, Not(HasSubstr("paceline_allocated_unused{resource=\"memory\"} 0\n")));

  ASSERT_EQ(c.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "KILLED"; }, absl::Seconds(30)));
  // A run that ended shows no usage.
  EXPECT_EQ(JsonInt(TaskOf(c, job, 0)["usage_at_unix_ms"]), 0);
}

TEST(AgentE2E, HealthTransitionsReachTheMaster) {
  TestCluster c({.agents = 1});
  CreatePool(c);
  // Healthy while the file exists; the task removes it once the test has written `done`, so a
  // slow machine cannot see it turn unhealthy before the test has read it healthy.
  const std::string done = c.dir() + "/done";
  uint64_t job =
      c.CreateJob("/e2e", absl::StrCat(R"(
name: checked
instances: 1
task:
  command: "touch ready; while ! test -f )",
                                       done, R"(; do sleep 0.2; done; rm ready; sleep 600"
  resources: {cpu: 0.1, memory: 32Mi}
  health: {command: "test -f ready", interval: 1s, timeout: 1s, failures: 2}
)"));
  ASSERT_GT(job, 0u);
  Json task;
  ASSERT_TRUE(WaitFor(
      [&] {
        task = TaskOf(c, job, 0);
        return !task.is_null() && task["health"] == "HEALTHY";
      },
      absl::Seconds(30)))
      << task.dump();
  EXPECT_EQ(task["state"], "RUNNING");
  Json got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(got["job"]["healthy"], 1);
  EXPECT_EQ(got["job"]["unhealthy"], 0);
  RunResult jobget = c.Cli({"job", "get", std::to_string(job)});
  EXPECT_THAT(jobget.out, HasSubstr("health: 1 healthy, 0 unhealthy, 0 unknown"));
  std::ofstream(done) << "done\n";

  ASSERT_TRUE(WaitFor(
      [&] {
        task = TaskOf(c, job, 0);
        return !task.is_null() && task["health"] == "UNHEALTHY";
      },
      absl::Seconds(30)))
      << task.dump();
  EXPECT_EQ(task["state"], "RUNNING") << "an unhealthy task keeps running";
  EXPECT_EQ(task["run"], 1);
  got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(got["job"]["healthy"], 0);
  EXPECT_EQ(got["job"]["unhealthy"], 1);
  RunResult get = c.Cli({"task", "get", absl::StrCat(job, "/0")});
  EXPECT_THAT(get.out, HasSubstr("health: UNHEALTHY"));
  RunResult list = c.Cli({"task", "list", std::to_string(job)});
  EXPECT_THAT(list.out, HasSubstr("UNHEALTHY"));

  // The history has both transitions, in order, as RUNNING events of run 1.
  std::vector<std::string> reasons;
  for (const auto& [run, state, reason] : Events(c, job, 0)) {
    if (state == "RUNNING") reasons.push_back(reason);
    EXPECT_EQ(run, 1u);
  }
  EXPECT_THAT(reasons, ::testing::ElementsAre("STARTED", "HEALTHY", "UNHEALTHY"));
  RunResult events = c.Cli({"task", "events", absl::StrCat(job, "/0")});
  EXPECT_THAT(events.out, HasSubstr("UNHEALTHY"));
  ASSERT_EQ(c.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
}

// The peers file of `job`/`instance`'s current run, as the task printed it; null until then.
Json PeersOf(TestCluster& c, uint64_t job, uint32_t instance) {
  RunResult logs = c.Cli({"task", "logs", absl::StrCat(job, "/", instance)});
  if (logs.exit_code != 0) return Json();
  Json peers = Json::parse(logs.out, nullptr, false);
  return peers.is_discarded() || !peers.is_object() ? Json() : peers;
}

TEST(AgentE2E, GangMembersGetTheirPeersFile) {
  TestCluster c;  // three agents of 2 cores: one 1.5-core member on each
  CreatePool(c);
  uint64_t job = c.CreateJob("/e2e", R"(
name: gang
instances: 3
sla: {min_running_instances: 3}
task:
  command: "cat $PACELINE_PEERS_FILE; exec sleep 600"
  ports: [rpc]
  resources: {cpu: 1.5, memory: 32Mi}
)");
  ASSERT_GT(job, 0u);
  std::map<std::string, Json> first;  // instance -> its peers file
  ASSERT_TRUE(WaitFor(
      [&] {
        for (uint32_t i = 0; i < 3; ++i) {
          Json p = PeersOf(c, job, i);
          if (p.size() != 3) return false;
          first[std::to_string(i)] = p;
        }
        return true;
      },
      absl::Seconds(60)));
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  std::map<std::string, std::string> host_of;  // instance -> host
  for (const Json& t : tasks["tasks"]) {
    host_of[std::to_string(t["instance"].get<uint32_t>())] = t["host"];
  }
  ASSERT_EQ(host_of.size(), 3u);
  std::set<std::string> hosts;
  for (const auto& [i, h] : host_of) hosts.insert(h);
  EXPECT_EQ(hosts.size(), 3u) << "one member per agent";

  for (const auto& [member, peers] : first) {
    for (const auto& [instance, host] : host_of) {
      ASSERT_TRUE(peers.contains(instance)) << peers.dump();
      EXPECT_EQ(peers[instance]["host"], host) << peers.dump();
      EXPECT_EQ(peers[instance]["address"], "127.0.0.1") << peers.dump();
      EXPECT_GE(peers[instance]["ports"]["rpc"].get<int>(), 32000) << peers.dump();
      EXPECT_EQ(peers[instance], first["0"][instance]) << "every member sees the same peers";
    }
  }

  // Member 1 restarts alone: its new run's sandbox still lists all three members — the others
  // where they run, with the ports they hold, and itself where it runs now.
  ASSERT_EQ(c.Cli({"task", "restart", absl::StrCat(job, "/1")}).exit_code, 0);
  Json again;
  ASSERT_TRUE(WaitFor(
      [&] {
        Json t = TaskOf(c, job, 1);
        if (t.is_null() || t["run"] != 2 || t["state"] != "RUNNING") return false;
        again = PeersOf(c, job, 1);
        return again.size() == 3;
      },
      absl::Seconds(60)))
      << again.dump();
  Json restarted = TaskOf(c, job, 1);
  for (const char* other : {"0", "2"}) {
    EXPECT_EQ(again[other], first["0"][other]) << again.dump();
  }
  EXPECT_EQ(again["1"]["host"], restarted["host"]) << again.dump();
  EXPECT_GE(again["1"]["ports"]["rpc"].get<int>(), 32000) << again.dump();
  ASSERT_EQ(c.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
}

TEST(AgentE2E, AgentKilledUnderTwentyTasksReadoptsThemAll) {
  // The restarted agent registers well within the host timeout; 10 s keeps a loaded machine
  // from declaring the host lost while the agent starts again.
  TestCluster c({.agents = 1, .host_timeout = "10s"});
  CreatePool(c);
  uint64_t job = c.CreateJob("/e2e", R"(
name: survivors
instances: 20
task:
  command: "sleep 5; exit 0"
  resources: {cpu: 0.05, memory: 16Mi}
)");
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c.WaitForJob(
      job,
      [](const Json& j) {
        return j.contains("task_counts") && j["task_counts"].value("RUNNING", 0) == 20;
      },
      absl::Seconds(30)));
  c.agent(0).Signal(SIGKILL);
  ASSERT_TRUE(c.agent(0).WaitExit(absl::Seconds(10)).has_value());
  c.StartAgent(0);

  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err << c.agent(0).Output();
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  ASSERT_EQ(tasks["tasks"].size(), 20u);
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
    EXPECT_EQ(t["run"], 1) << "re-adopted, not run again: " << t.dump();
    EXPECT_EQ(t["exit_code"], 0) << t.dump();
  }
  for (uint32_t i = 0; i < 20; ++i) {
    for (const auto& [run, state, reason] : Events(c, job, i)) {
      EXPECT_EQ(run, 1u) << "instance " << i;
      EXPECT_NE(state, "LOST") << "instance " << i;
    }
  }
}

TEST(AgentE2E, MasterUnreachableFor30sTakes40s) {
  // With the master stopped (SIGSTOP), its clock keeps running: when it resumes, every host
  // has been silent for 30 s. A host timeout longer than the outage keeps it from declaring
  // the hosts LOST (and running the tasks again) before the agents reconnect; the agents find
  // out that the master hung through gRPC keepalive and reconnect with their backoff.
  TestCluster c({.agents = 2, .host_timeout = "60s"});
  CreatePool(c);
  uint64_t job = c.CreateJob("/e2e", R"(
name: through-the-outage
instances: 10
task:
  command: "sleep 10"
  resources: {cpu: 0.1, memory: 16Mi}
)");
  ASSERT_GT(job, 0u);
  // All ten run at once (they last 10 s, so a slow launch under load still overlaps the
  // others) and end during the 30 s outage.
  ASSERT_TRUE(c.WaitForJob(
      job,
      [](const Json& j) {
        return j.contains("task_counts") && j["task_counts"].value("RUNNING", 0) == 10;
      },
      absl::Seconds(60)));
  c.master().Signal(SIGSTOP);
  // The point of the test is wall-clock time without a master: the tasks end meanwhile.
  std::this_thread::sleep_for(std::chrono::seconds(30));
  c.master().Signal(SIGCONT);

  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  for (uint32_t i = 0; i < 10; ++i) {
    int terminal = 0;
    for (const auto& [run, state, reason] : Events(c, job, i)) {
      EXPECT_EQ(run, 1u) << "instance " << i << " ran again";
      if (IsTerminal(state)) {
        ++terminal;
        EXPECT_EQ(state, "SUCCEEDED") << "instance " << i;
      }
    }
    EXPECT_EQ(terminal, 1) << "instance " << i;
  }
  EXPECT_THAT(c.agent(0).Output() + c.agent(1).Output(), HasSubstr("lost the master"));
}

}  // namespace
}  // namespace paceline::e2e
