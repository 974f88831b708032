// End to end: a real `paceline master` and a fleet of emulated hosts (GrpcAgentFleet) in this
// process, each host on its own real agent stream: batch jobs run to their end on them, and
// the fleet's view (launches, acknowledgements) agrees with the master's.

#include <signal.h>

#include <algorithm>
#include <set>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "bench/grpc_agent_fleet.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
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
  // `prefix` names the hosts; `batches`: whether they read the master's batches (false
  // emulates agents older than batches). The pool /fleet is made with the first fleet.
  std::unique_ptr<bench::GrpcAgentFleet> StartFleet(int hosts, absl::Duration task_duration,
                                                    int gpus = 0,
                                                    const std::string& prefix = "fake",
                                                    bool batches = true) {
    Json endpoints = Json::parse(ReadFile(cluster_.dir() + "/master/master.json"));
    bench::GrpcFleetConfig config;
    config.master_addr = endpoints["grpc"];
    config.token = cluster_.agent_token();
    v1::Resources capacity = bench::Capacity(1000, kGi);
    capacity.set_gpu_milli(gpus * 1000);
    config.hosts = bench::UniformHosts(hosts, prefix, capacity, {{"kind", "fake"}});
    for (bench::FakeHostSpec& h : config.hosts) h.gpu_model = "A100";
    config.agent.task_duration = task_duration;
    config.agent.batches = batches;
    absl::StatusOr<std::unique_ptr<bench::GrpcAgentFleet>> fleet =
        bench::GrpcAgentFleet::Start(std::move(config));
    EXPECT_TRUE(fleet.ok()) << fleet.status();
    if (!fleet.ok()) return nullptr;
    absl::Status registered = (*fleet)->WaitRegistered(absl::Seconds(30));
    EXPECT_TRUE(registered.ok()) << registered << "\n" << cluster_.master().Output();
    if (!pool_made_) {
      RunResult pool =
          cluster_.Cli({"pool", "create", "/fleet", "-f", cluster_.WriteFile("pool.yaml", kPool)});
      EXPECT_EQ(pool.exit_code, 0) << pool.err;
      pool_made_ = true;
    }
    return std::move(*fleet);
  }

  // Creates a job `name` of `instances` instances of `true` (0.5 cpu each) in /fleet and waits
  // until it succeeded; 0 (with a test failure) if it did not.
  uint64_t RunToSuccess(const std::string& name, int instances) {
    uint64_t job =
        cluster_.CreateJob("/fleet", absl::StrCat("name: ", name, "\ninstances: ", instances, R"(
task:
  command: "true"
  resources: {cpu: 0.5, memory: 256Mi}
)"));
    EXPECT_GT(job, 0u);
    if (job == 0) return 0;
    RunResult wait = cluster_.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
    EXPECT_EQ(wait.exit_code, 0) << wait.out << wait.err;
    return wait.exit_code == 0 ? job : 0;
  }

  static ClusterOptions Options() {
    ClusterOptions o;
    o.agents = 0;
    o.host_timeout = "10s";
    return o;
  }

  TestCluster cluster_{Options()};
  bool pool_made_ = false;
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
  uint64_t job = RunToSuccess("emulated", 1000);
  ASSERT_GT(job, 0u);
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

TEST_F(FleetE2E, BurstsGoAsBatchesToAgentsThatReadThemAndOneByOneToOlderOnes) {
  // 10 hosts of each kind, 1 cpu each: 40 tasks of 0.5 cpu fill both kinds in one cycle, so
  // each host gets its two launches (and its acknowledgement) in a burst.
  std::unique_ptr<bench::GrpcAgentFleet> batched = StartFleet(10, absl::Seconds(1), 0, "new");
  std::unique_ptr<bench::GrpcAgentFleet> older =
      StartFleet(10, absl::Seconds(1), 0, "old", /*batches=*/false);
  ASSERT_NE(batched, nullptr);
  ASSERT_NE(older, nullptr);
  uint64_t job = RunToSuccess("bursts", 200);
  ASSERT_GT(job, 0u);
  Json got = cluster_.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(Count(got["job"], "SUCCEEDED"), 200u);
  ASSERT_TRUE(WaitFor(
      [&] {
        return batched->counters().succeeded_acked + older->counters().succeeded_acked == 200;
      },
      absl::Seconds(10)));

  bench::FleetCounters n = batched->counters(), o = older->counters();
  EXPECT_GT(n.launches, 0);
  EXPECT_GT(o.launches, 0);
  EXPECT_EQ(n.launches + o.launches, 200);
  EXPECT_EQ(n.running_acked + o.running_acked, 200) << "every update acknowledged, each once";
  EXPECT_GT(n.batches_in, 0) << "the master packed what queued for a host that reads batches";
  EXPECT_GT(n.batches_out, 0) << "the host's RUNNING and SUCCEEDED went as batches";
  EXPECT_LT(n.batches_in, n.messages_in);
  EXPECT_EQ(o.batches_in, 0) << "an older agent gets every message alone";
  EXPECT_EQ(o.batches_out, 0);
  EXPECT_EQ(n.stream_errors + o.stream_errors, 0) << n.last_error << o.last_error;
  Json tasks = cluster_.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) EXPECT_EQ(t["run"], 1) << t.dump();
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

// POST /api/v1/SERVICE/METHOD with `body`: the HTTP status and the parsed answer.
std::pair<int, Json> Call(TestCluster& cluster, const std::string& method, const Json& body) {
  TestCluster::HttpResult r = cluster.Http("POST", "/api/v1/" + method, body.dump());
  return {r.status, Json::parse(r.body, nullptr, /*allow_exceptions=*/false)};
}

TEST_F(FleetE2E, TheMasterPagesAndFiltersHostsAndNamesWhoHoldsEachGpu) {
  std::unique_ptr<bench::GrpcAgentFleet> fleet = StartFleet(250, absl::InfiniteDuration(), 2);
  ASSERT_NE(fleet, nullptr);

  // Three pages of 100, 100 and 50, by name, each starting after the previous page's last.
  std::vector<std::string> names;
  std::string token;
  for (int page = 0; page < 3; ++page) {
    auto [status, r] =
        Call(cluster_, "HostService/ListHosts", {{"page_size", 100}, {"page_token", token}});
    ASSERT_EQ(status, 200) << r.dump();
    EXPECT_EQ(r["matching"], 250);
    EXPECT_EQ(r["offset"], page * 100);
    EXPECT_EQ(r["states"]["UP"], 250) << r["states"].dump();
    EXPECT_EQ(r["hosts"].size(), page < 2 ? 100u : 50u);
    for (const Json& h : r["hosts"]) names.push_back(h["name"]);
    token = r["next_page_token"];
    EXPECT_EQ(token.empty(), page == 2);
  }
  ASSERT_EQ(names.size(), 250u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 250u);

  auto [s1, some] = Call(cluster_, "HostService/ListHosts", {{"name_contains", "-0012"}});
  ASSERT_EQ(s1, 200);
  EXPECT_EQ(some["matching"], 10) << "fake-00120 .. fake-00129";
  EXPECT_EQ(some["hosts"].size(), 10u) << "page_size 0: every matching host";
  auto [s2, lost] = Call(cluster_, "HostService/ListHosts", {{"state", "LOST"}});
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(lost["matching"], 0);
  EXPECT_EQ(lost["states"]["UP"], 250) << "the counts are over every host";

  // Bad filters are refused, naming the field.
  auto [s3, bad_state] = Call(cluster_, "HostService/ListHosts", {{"state", "SLEEPY"}});
  EXPECT_EQ(s3, 400);
  EXPECT_THAT(bad_state.dump(), HasSubstr("state: unknown host state 'SLEEPY'"));
  auto [s4, big] = Call(cluster_, "HostService/ListHosts", {{"page_size", 1001}});
  EXPECT_EQ(s4, 400);
  EXPECT_THAT(big.dump(), HasSubstr("page_size"));

  // Three halves of a GPU: the devices say how much each has allocated and to whom.
  RunResult pool = cluster_.Cli(
      {"pool", "create", "/gpu", "-f",
       cluster_.WriteFile("gpu.yaml",
                          "resources:\n  cpu: {reservation: 10}\n  memory: {reservation: 10Gi}\n"
                          "  gpu: {reservation: 10}\n")});
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  uint64_t job = cluster_.CreateJob("/gpu", R"(
name: trainer
instances: 3
task:
  command: "sleep 3600"
  resources: {cpu: 0.1, memory: 64Mi, gpu: 0.5}
)");
  int64_t milli = 0;
  std::set<uint32_t> instances;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto [status, r] = Call(cluster_, "HostService/ListHosts", Json::object());
        milli = 0;
        instances.clear();
        for (const Json& h : r["hosts"]) {
          if (!h.contains("gpus")) continue;
          EXPECT_EQ(h["gpus"].size(), 2u);
          for (const Json& d : h["gpus"]) {
            EXPECT_EQ(d["model"], "A100");
            milli += d["milli_allocated"].get<int64_t>();
            int64_t held = 0;
            for (const Json& holder : d.value("holders", Json::array())) {
              EXPECT_EQ(holder["job_id"], std::to_string(job));
              EXPECT_EQ(holder["milli"], 500);
              held += holder["milli"].get<int64_t>();
              instances.insert(holder["instance"].get<uint32_t>());
            }
            EXPECT_EQ(held, d["milli_allocated"].get<int64_t>()) << d.dump();
          }
        }
        return milli == 1500 && instances.size() == 3;
      },
      absl::Seconds(30)))
      << "allocated " << milli << " milli-GPUs to " << instances.size() << " instances";
  RunResult list = cluster_.Cli({"host", "list", "--name", "fake-0000", "--state", "UP"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("A100:"));
  EXPECT_THAT(list.out, Not(HasSubstr("fake-00010")));
}

TEST_F(FleetE2E, TheHistoryHasTheClusterAndAPoolAndJobsAreFilteredByType) {
  std::unique_ptr<bench::GrpcAgentFleet> fleet = StartFleet(20, absl::InfiniteDuration());
  ASSERT_NE(fleet, nullptr);
  cluster_.CreateJob("/fleet",
                     "name: b\ninstances: 4\ntask:\n  command: x\n"
                     "  resources: {cpu: 0.5, memory: 64Mi}\n");
  cluster_.CreateJob("/fleet",
                     "name: s\ntype: service\ninstances: 2\ntask:\n  command: x\n"
                     "  resources: {cpu: 0.5, memory: 64Mi}\n");

  // The test cluster records a point every second: wait for one with the six tasks running.
  Json last;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto [status, r] = Call(cluster_, "ClusterService/GetHistory", {{"pool", "/fleet"}});
        if (status != 200 || !r.contains("cluster") || !r.contains("pool")) return false;
        last = r;
        return r["cluster"].back()["running_tasks"] == 6;
      },
      absl::Seconds(30)))
      << last.dump();
  EXPECT_EQ(last["period_ms"], "1000");
  uint64_t placed = 0;
  for (const Json& p : last["cluster"]) placed += p["placed"].get<uint64_t>();
  EXPECT_EQ(placed, 6u) << "each placement is counted in one point";
  EXPECT_EQ(last["cluster"].back()["capacity"]["cpu_milli"], "20000");
  EXPECT_EQ(last["cluster"].back()["allocated"]["cpu_milli"], "3000");
  EXPECT_EQ(last["pool"].back()["allocation"]["cpu_milli"], "3000");
  EXPECT_EQ(last["pool"].back()["entitlement"]["cpu_milli"].get<std::string>().empty(), false);
  auto [s1, none] = Call(cluster_, "ClusterService/GetHistory", {{"pool", "/nowhere"}});
  EXPECT_EQ(s1, 200);
  EXPECT_FALSE(none.contains("pool") && !none["pool"].empty());
  TestCluster::HttpResult anonymous =
      cluster_.Http("POST", "/api/v1/ClusterService/GetHistory", "{}", /*with_token=*/false);
  EXPECT_EQ(anonymous.status, 401);

  Json services = cluster_.CliJson({"job", "list", "--type", "service"});
  ASSERT_EQ(services["jobs"].size(), 1u) << services.dump();
  EXPECT_EQ(services["jobs"][0]["name"], "s");
  auto [s2, bad] = Call(cluster_, "JobService/QueryJobs", {{"types", {"cron"}}});
  EXPECT_EQ(s2, 400);
  EXPECT_THAT(bad.dump(), HasSubstr("types: unknown job type 'cron'"));
}

}  // namespace
}  // namespace paceline::e2e
