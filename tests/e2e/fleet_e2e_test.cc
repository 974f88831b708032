// End to end: a real `paceline master` and a fleet of emulated hosts (GrpcAgentFleet) in this
// process, each host on its own real agent stream: batch jobs run to their end on them, and
// the fleet's view (launches, acknowledgements) agrees with the master's.

#include <signal.h>

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "bench/grpc_agent_fleet.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr int64_t kGi = int64_t{1} << 30;

constexpr char kPool[] = R"(
description: emulated hosts
resources:
  cpu:    {reservation: 200, limit: 200}
  memory: {reservation: 200Gi, limit: 200Gi}
)";

uint32_t Count(const Json& job, const std::string& state) {
  if (!job.contains("task_counts") || !job["task_counts"].contains(state)) return 0;
  return job["task_counts"][state].get<uint32_t>();
}

// A master with no real agent, a pool, and `hosts` emulated hosts of 1 cpu and 1Gi.
class FleetE2E : public ::testing::Test {
 protected:
  std::unique_ptr<bench::GrpcAgentFleet> StartFleet(int hosts, absl::Duration task_duration) {
    Json endpoints = Json::parse(ReadFile(cluster_.dir() + "/master/master.json"));
    bench::GrpcFleetConfig config;
    config.master_addr = endpoints["grpc"];
    config.token = cluster_.token();
    config.hosts =
        bench::UniformHosts(hosts, "fake", bench::Capacity(1000, kGi), {{"kind", "fake"}});
    config.agent.task_duration = task_duration;
    absl::StatusOr<std::unique_ptr<bench::GrpcAgentFleet>> fleet =
        bench::GrpcAgentFleet::Start(std::move(config));
    EXPECT_TRUE(fleet.ok()) << fleet.status();
    if (!fleet.ok()) return nullptr;
    absl::Status registered = (*fleet)->WaitRegistered(absl::Seconds(30));
    EXPECT_TRUE(registered.ok()) << registered << "\n" << cluster_.master().Output();
    RunResult pool =
        cluster_.Cli({"pool", "create", "/fleet", "-f", cluster_.WriteFile("pool.yaml", kPool)});
    EXPECT_EQ(pool.exit_code, 0) << pool.err;
    return std::move(*fleet);
  }

  static ClusterOptions Options() {
    ClusterOptions o;
    o.agents = 0;
    o.host_timeout = "10s";
    return o;
  }

  TestCluster cluster_{Options()};
};

TEST_F(FleetE2E, ThousandInstancesSucceedOnTwoHundredEmulatedHosts) {
  std::unique_ptr<bench::GrpcAgentFleet> fleet = StartFleet(200, absl::Seconds(1));
  ASSERT_NE(fleet, nullptr);

  Json hosts = cluster_.CliJson({"host", "list"});
  ASSERT_EQ(hosts["hosts"].size(), 200u);
  std::set<std::string> names;
  for (const Json& h : hosts["hosts"]) {
    EXPECT_TRUE(h.value("connected", false)) << h.dump();
    EXPECT_EQ(h["capacity"]["cpu_milli"], "1000") << h.dump();
    EXPECT_EQ(h["labels"]["kind"], "fake");
    names.insert(h["name"]);
  }
  EXPECT_EQ(names.size(), 200u);
  EXPECT_EQ(*names.begin(), "fake-00000");

  const absl::Time start = absl::Now();
  uint64_t job = cluster_.CreateJob("/fleet", R"(
name: emulated
instances: 1000
task:
  command: "true"
  resources: {cpu: 0.5, memory: 256Mi}
)");
  ASSERT_GT(job, 0u);
  RunResult wait = cluster_.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.out << wait.err;
  Json got = cluster_.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(got["job"]["state"], "SUCCEEDED");
  EXPECT_EQ(Count(got["job"], "SUCCEEDED"), 1000u);
  // 400 slots (2 per host), 1,000 runs of 1 s: at least 3 waves.
  EXPECT_GE(absl::Now() - start, absl::Seconds(3));

  // The master acknowledges after it commits: the last acks may trail `job wait` a little.
  bool all_acked =
      WaitFor([&] { return fleet->counters().succeeded_acked >= 1000; }, absl::Seconds(10));
  bench::FleetCounters c = fleet->counters();
  EXPECT_TRUE(all_acked) << c.succeeded_acked;
  EXPECT_EQ(c.launches, 1000);
  EXPECT_EQ(c.running_sent, 1000);
  EXPECT_EQ(c.running_acked, 1000) << "every launch got its RUNNING acknowledged";
  EXPECT_EQ(c.succeeded_sent, 1000);
  EXPECT_EQ(c.succeeded_acked, 1000);
  EXPECT_EQ(c.kills, 0);
  EXPECT_EQ(c.killed_sent, 0);
  EXPECT_GE(c.acks, 1);
  EXPECT_EQ(c.registered, 200);
  EXPECT_EQ(c.registrations, 200);
  EXPECT_EQ(c.reconnects, 0);
  EXPECT_EQ(c.stream_errors, 0) << c.last_error;

  // The work went to every host, each run once.
  Json tasks = cluster_.CliJson({"task", "list", std::to_string(job)});
  ASSERT_EQ(tasks["tasks"].size(), 1000u);
  std::set<std::string> used;
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED");
    EXPECT_EQ(t["run"], 1);
    used.insert(t["host"]);
  }
  EXPECT_EQ(used.size(), 200u);

  fleet->Stop();
  EXPECT_EQ(fleet->counters().registered, 0);
}

TEST_F(FleetE2E, KillsAndLogRequestsReachEmulatedHosts) {
  std::unique_ptr<bench::GrpcAgentFleet> fleet = StartFleet(4, absl::InfiniteDuration());
  ASSERT_NE(fleet, nullptr);
  uint64_t job = cluster_.CreateJob("/fleet", R"(
name: forever
instances: 6
task:
  command: "sleep infinity"
  resources: {cpu: 0.5, memory: 256Mi}
)");
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(cluster_.WaitForJob(
      job, [](const Json& j) { return Count(j, "RUNNING") == 6; }, absl::Seconds(30)));

  RunResult logs = cluster_.Cli({"task", "logs", absl::StrCat(job, "/0")});
  EXPECT_NE(logs.exit_code, 0);
  EXPECT_THAT(logs.err, HasSubstr("emulated host has no logs"));

  RunResult kill = cluster_.Cli({"job", "kill", std::to_string(job)});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  ASSERT_TRUE(cluster_.WaitForJob(
      job, [](const Json& j) { return j.value("state", "") == "KILLED"; }, absl::Seconds(30)));
  bool acked = WaitFor([&] { return fleet->counters().killed_acked >= 6; }, absl::Seconds(10));
  bench::FleetCounters c = fleet->counters();
  EXPECT_TRUE(acked) << c.killed_acked;
  EXPECT_EQ(c.launches, 6);
  EXPECT_EQ(c.running_acked, 6);
  EXPECT_EQ(c.kills, 6);
  EXPECT_EQ(c.killed_sent, 6);
  EXPECT_EQ(c.succeeded_sent, 0);
  EXPECT_GE(c.log_requests, 1);
  EXPECT_EQ(c.stream_errors, 0) << c.last_error;
}

TEST_F(FleetE2E, HostsRegisterAgainWithTheirRunsAfterTheMasterRestarts) {
  std::unique_ptr<bench::GrpcAgentFleet> fleet = StartFleet(20, absl::InfiniteDuration());
  ASSERT_NE(fleet, nullptr);
  uint64_t job = cluster_.CreateJob("/fleet", R"(
name: survivor
instances: 10
task:
  command: "sleep infinity"
  resources: {cpu: 0.5, memory: 256Mi}
)");
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitFor([&] { return fleet->counters().running_acked == 10; }, absl::Seconds(30)));

  cluster_.master().Signal(SIGKILL);
  ASSERT_TRUE(cluster_.master().WaitExit(absl::Seconds(10)).has_value());
  ASSERT_TRUE(WaitFor([&] { return fleet->counters().registered == 0; }, absl::Seconds(10)))
      << "every stream ends with the master";
  cluster_.StartMaster();
  absl::Status again = fleet->WaitRegistered(absl::Seconds(30));
  ASSERT_TRUE(again.ok()) << again << "\n" << cluster_.master().Output();

  // The master adopted the runs the hosts listed: nothing was launched again.
  ASSERT_TRUE(cluster_.WaitForJob(
      job, [](const Json& j) { return Count(j, "RUNNING") == 10; }, absl::Seconds(30)));
  Json tasks = cluster_.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) EXPECT_EQ(t["run"], 1) << t.dump();
  bench::FleetCounters c = fleet->counters();
  EXPECT_EQ(c.launches, 10);
  EXPECT_GE(c.reconnects, 20);
  EXPECT_GE(c.registrations, 40);

  ASSERT_EQ(cluster_.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return fleet->counters().killed_acked == 10; }, absl::Seconds(30)));
}

TEST_F(FleetE2E, AWrongTokenIsRefusedAndSaysSo) {
  Json endpoints = Json::parse(ReadFile(cluster_.dir() + "/master/master.json"));
  bench::GrpcFleetConfig config;
  config.master_addr = endpoints["grpc"];
  config.token = "not-the-token";
  config.hosts = bench::UniformHosts(3, "fake", bench::Capacity(1000, kGi));
  absl::StatusOr<std::unique_ptr<bench::GrpcAgentFleet>> fleet =
      bench::GrpcAgentFleet::Start(std::move(config));
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  absl::Status registered = (*fleet)->WaitRegistered(absl::Milliseconds(500));
  EXPECT_EQ(registered.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(registered.message()), HasSubstr("0 of 3 emulated hosts registered"));
  EXPECT_THAT(std::string(registered.message()), HasSubstr("UNAUTHENTICATED"));
  EXPECT_GE((*fleet)->counters().stream_errors, 3);
  EXPECT_EQ(cluster_.CliJson({"host", "list"})["hosts"].size(), 0u);
}

TEST(FleetConfig, IsValidated) {
  bench::GrpcFleetConfig config;
  config.hosts = bench::UniformHosts(2, "fake", bench::Capacity(1000, kGi));
  EXPECT_THAT(bench::GrpcAgentFleet::Start(config).status().message(), HasSubstr("master_addr"));
  config.master_addr = "127.0.0.1:1";
  config.hosts[1].name = config.hosts[0].name;
  EXPECT_THAT(bench::GrpcAgentFleet::Start(config).status().message(),
              HasSubstr("'fake-00000' twice"));
  config.hosts.clear();
  EXPECT_EQ(bench::GrpcAgentFleet::Start(config).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace paceline::e2e
