// End to end: daemon jobs, stateful jobs and host maintenance on a real master and real agents.
// A daemon job follows the hosts (one instance each, including a host that joins later, none on
// a drained host); a stateful instance finds its volume again on the same host, and waits for a
// lost host until its volume is released; draining a host moves a service's instances one at a
// time and ends DRAINED; down and up.

#include <signal.h>

#include <filesystem>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 2, limit: 8}\n";

class MaintenanceE2E : public ::testing::Test {
 protected:
  void Start(int agents) {
    c_ = std::make_unique<TestCluster>(ClusterOptions{.agents = agents, .host_timeout = "3s"});
    RunResult r = c_->Cli({"pool", "create", "/ops", "-f", c_->WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Host of each RUNNING instance.
  std::map<uint32_t, std::string> RunningOn(uint64_t job) {
    std::map<uint32_t, std::string> out;
    Json tasks = c_->CliJson({"task", "list", std::to_string(job)});
    for (const Json& t : tasks["tasks"]) {
      if (t["state"] == "RUNNING") out[t.value("instance", 0u)] = t["host"];
    }
    return out;
  }
  Json Host(const std::string& name) {
    Json all = c_->CliJson({"host", "list"});
    for (const Json& h : all["hosts"]) {
      if (h["name"] == name) return h;
    }
    return Json();
  }
  std::unique_ptr<TestCluster> c_;
};

TEST_F(MaintenanceE2E, ADaemonFollowsTheHostsThatJoinAndLeave) {
  Start(3);
  uint64_t job = c_->CreateJob("/ops", R"(
name: log-shipper
type: daemon
task:
  command: "sleep 1000"
  resources: {cpu: 0.1, memory: 16Mi}
  kill_grace: 1s
)");
  ASSERT_TRUE(WaitFor([&] { return RunningOn(job).size() == 3; }, absl::Seconds(30)));
  int joined = c_->AddAgent();
  ASSERT_TRUE(c_->WaitForHosts(4));
  ASSERT_TRUE(WaitFor([&] { return RunningOn(job).size() == 4; }, absl::Seconds(30)));
  std::set<std::string> hosts;
  for (const auto& [i, host] : RunningOn(job)) hosts.insert(host);
  EXPECT_EQ(hosts.size(), 4u) << "one instance per host";
  EXPECT_TRUE(hosts.contains(c_->agent_name(joined)));

  std::string drained = c_->agent_name(1);
  ASSERT_EQ(c_->Cli({"host", "drain", drained}).exit_code, 0);
  ASSERT_TRUE(
      WaitFor([&] { return Host(drained).value("state", "") == "DRAINED"; }, absl::Seconds(30)))
      << Host(drained).dump();
  std::map<uint32_t, std::string> after = RunningOn(job);
  EXPECT_EQ(after.size(), 3u);
  for (const auto& [i, host] : after) EXPECT_NE(host, drained);
  // Up again: it gets its instance back.
  ASSERT_EQ(c_->Cli({"host", "up", drained}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return RunningOn(job).size() == 4; }, absl::Seconds(30)));
}

TEST_F(MaintenanceE2E, DrainingMovesAServiceOneInstanceAtATime) {
  Start(2);
  uint64_t job = c_->CreateJob("/ops", R"(
name: api
type: service
instances: 4
sla: {max_unavailable_instances: 1}
task:
  command: "sleep 1000"
  resources: {cpu: 0.1, memory: 16Mi}
  kill_grace: 1s
)");
  ASSERT_TRUE(WaitFor([&] { return RunningOn(job).size() == 4; }, absl::Seconds(30)));
  std::map<std::string, int> per_host;
  for (const auto& [i, host] : RunningOn(job)) ++per_host[host];
  std::string busiest = per_host.begin()->first;
  for (const auto& [h, n] : per_host) {
    if (n > per_host[busiest]) busiest = h;
  }
  ASSERT_GE(per_host[busiest], 2) << "the test needs a host with several instances";

  RunResult down_too_early = c_->Cli({"host", "down", busiest});
  EXPECT_NE(down_too_early.exit_code, 0);
  EXPECT_THAT(down_too_early.err, HasSubstr("drain it first"));

  ASSERT_EQ(c_->Cli({"host", "drain", busiest}).exit_code, 0);
  size_t worst = 4;
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  Json host;
  while (absl::Now() < deadline) {
    worst = std::min(worst, RunningOn(job).size());
    host = Host(busiest);
    if (host.value("state", "") == "DRAINED") break;
  }
  EXPECT_EQ(host.value("state", ""), "DRAINED") << host.dump();
  EXPECT_EQ(host.value("tasks", 0), 0);
  EXPECT_GE(worst, 3u) << "max_unavailable_instances 1: never more than one instance down";
  ASSERT_TRUE(WaitFor([&] { return RunningOn(job).size() == 4; }, absl::Seconds(30)));
  for (const auto& [i, h] : RunningOn(job)) EXPECT_NE(h, busiest);

  RunResult down = c_->Cli({"host", "down", busiest});
  EXPECT_EQ(down.exit_code, 0) << down.err;
  EXPECT_EQ(Host(busiest).value("state", ""), "DOWN");
  RunResult up = c_->Cli({"host", "up", busiest});
  EXPECT_EQ(up.exit_code, 0) << up.err;
  EXPECT_EQ(Host(busiest).value("state", ""), "UP");
}

TEST_F(MaintenanceE2E, AStatefulInstanceKeepsItsVolumeOnItsHost) {
  Start(2);
  uint64_t job = c_->CreateJob("/ops", R"(
name: db
type: stateful
instances: 1
task:
  command: "if [ -f $PACELINE_VOLUME/data ]; then echo found; else echo written > $PACELINE_VOLUME/data; echo created; fi; exec sleep 1000"
  resources: {cpu: 0.1, memory: 16Mi}
  volume: {size: 16Mi}
  kill_grace: 1s
)");
  std::string task = absl::StrCat(job, "/0");
  ASSERT_TRUE(WaitFor([&] { return RunningOn(job).size() == 1; }, absl::Seconds(30)));
  std::string host = RunningOn(job)[0];
  ASSERT_TRUE(WaitFor(
      [&] {
        return c_->Cli({"task", "logs", task}).out == "created\n";
      },
      absl::Seconds(10)));

  ASSERT_EQ(c_->Cli({"task", "restart", task}).exit_code, 0);
  auto second_run = [&] {
    Json t = c_->CliJson({"task", "get", task})["task"];
    return t.value("run", 0) == 2 && t["state"] == "RUNNING";
  };
  ASSERT_TRUE(WaitFor(second_run, absl::Seconds(30)));
  EXPECT_EQ(RunningOn(job)[0], host) << "a stateful instance returns to its volume's host";
  ASSERT_TRUE(WaitFor(
      [&] {
        return c_->Cli({"task", "logs", task}).out == "found\n";
      },
      absl::Seconds(10)))
      << c_->Cli({"task", "logs", task}).out;

  // Its host dies: the instance waits for it rather than start elsewhere with an empty volume.
  int agent = host == c_->agent_name(0) ? 0 : 1;
  c_->agent(agent).Signal(SIGKILL);
  ASSERT_TRUE(WaitFor(
      [&] {
        return c_->CliJson({"job", "get", std::to_string(job)})
                   .value("pending_reason", "")
                   .find("waiting for its volume on host " + host) != std::string::npos;
      },
      absl::Seconds(30)));
  RunResult release = c_->Cli({"task", "release-volume", task});
  ASSERT_EQ(release.exit_code, 0) << release.err;
  ASSERT_TRUE(WaitFor([&] { return RunningOn(job).size() == 1; }, absl::Seconds(30)));
  EXPECT_EQ(RunningOn(job)[0], c_->agent_name(1 - agent));
  ASSERT_TRUE(WaitFor(
      [&] {
        return c_->Cli({"task", "logs", task}).out == "created\n";
      },
      absl::Seconds(10)));
  // The dead agent's host comes back: the master has it kill the run it no longer owns, so no
  // process outlives the test.
  c_->StartAgent(agent);
  EXPECT_TRUE(c_->WaitForHosts(2));

  // Deleted with its volumes: gone from both hosts (both are connected).
  std::string id = std::to_string(job);
  ASSERT_EQ(c_->Cli({"job", "kill", id}).exit_code, 0);
  ASSERT_TRUE(c_->WaitForJob(
      job, [](const Json& j) { return j.value("state", "") == "KILLED"; }, absl::Seconds(30)));
  std::vector<std::string> dirs;
  for (int i = 0; i < 2; ++i) {
    dirs.push_back(absl::StrCat(c_->dir(), "/", c_->agent_name(i), "/volumes/", id));
    EXPECT_TRUE(std::filesystem::exists(dirs.back())) << dirs.back();
  }
  RunResult del = c_->Cli({"job", "delete", id, "--purge-volumes"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_TRUE(WaitFor(
      [&] { return !std::filesystem::exists(dirs[0]) && !std::filesystem::exists(dirs[1]); },
      absl::Seconds(10)));
}

}  // namespace
}  // namespace paceline::e2e
