// End to end: batch jobs on a real master and real agents running real processes.
// The acceptance scenarios of the master issue: a 1,000-instance job on three agents, killing
// a running job, retries that end in FAILED, an agent that dies, and authentication and
// validation at the API.

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "paceline/v1/job.grpc.pb.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
description: end-to-end tests
resources:
  cpu:    {reservation: 2, limit: 6}
  memory: {reservation: 1Gi}
)";

uint32_t Count(const Json& job, const std::string& state) {
  if (!job.contains("task_counts") || !job["task_counts"].contains(state)) return 0;
  return job["task_counts"][state].get<uint32_t>();
}

class BatchE2E : public ::testing::Test {
 protected:
  void CreatePool(TestCluster& c) {
    RunResult r = c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(BatchE2E, ThousandInstancesSucceedOnThreeAgents) {
  TestCluster c;
  CreatePool(c);
  uint64_t job = c.CreateJob("/e2e", R"(
name: thousand
instances: 1000
task:
  command: "echo instance $PACELINE_INSTANCE_ID run $PACELINE_RUN_ID"
  resources: {cpu: 0.05, memory: 16Mi}
)");
  ASSERT_GT(job, 0u);
  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "180s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;

  Json got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(got["job"]["state"], "SUCCEEDED");
  EXPECT_EQ(Count(got["job"], "SUCCEEDED"), 1000u);

  // Every instance ran on one of the agents, with its times, exactly once.
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  ASSERT_EQ(tasks["tasks"].size(), 1000u);
  std::set<std::string> hosts;
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED");
    EXPECT_EQ(t["run"], 1);
    EXPECT_EQ(t["exit_code"], 0);
    EXPECT_THAT(std::string(t["host"]), ::testing::StartsWith("agent"));
    EXPECT_NE(t["started_at_unix_ms"], "0");
    EXPECT_NE(t["finished_at_unix_ms"], "0");
    hosts.insert(t["host"]);
  }
  EXPECT_EQ(hosts.size(), 3u) << "the work is spread over the three agents";

  // One instance's history: every transition, with its host.
  Json events = c.CliJson({"task", "events", absl::StrCat(job, "/7")});
  std::vector<std::string> states;
  for (const Json& e : events["events"]) states.push_back(e["state"]);
  EXPECT_THAT(states,
              ::testing::ElementsAre("READY", "PLACED", "LAUNCHING", "RUNNING", "SUCCEEDED"));
  EXPECT_THAT(std::string(events["events"].back()["host"]), ::testing::StartsWith("agent"));

  // Its logs, fetched from the agent that ran it.
  RunResult logs = c.Cli({"task", "logs", absl::StrCat(job, "/7")});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, absl::StrCat("instance 7 run ", job, "/7/1\n"));
  RunResult tail = c.Cli({"task", "logs", absl::StrCat(job, "/8"), "--tail", "1"});
  EXPECT_EQ(tail.out, absl::StrCat("instance 8 run ", job, "/8/1\n"));
  RunResult err = c.Cli({"task", "logs", absl::StrCat(job, "/8"), "--stderr"});
  EXPECT_EQ(err.exit_code, 0) << err.err;
  EXPECT_EQ(err.out, "");

  // The pool holds nothing once the job is done.
  Json pools = c.CliJson({"pool", "list"});
  for (const Json& p : pools["pools"]) {
    for (const Json& d : p["dimensions"]) EXPECT_EQ(d["allocation"], "0") << p["path"];
  }

  // And Prometheus sees the same.
  std::string metrics = c.HttpGet("/metrics");
  EXPECT_THAT(metrics, HasSubstr("paceline_tasks{state=\"SUCCEEDED\"} 1000\n"));
  EXPECT_THAT(metrics, HasSubstr("paceline_jobs{state=\"SUCCEEDED\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("paceline_placements_total 1000\n"));
  EXPECT_THAT(metrics, HasSubstr("paceline_pool_queued_gangs{pool=\"/e2e\"} 0\n"));
  EXPECT_THAT(metrics, HasSubstr("paceline_hosts{connected=\"true\"} 3\n"));
  EXPECT_THAT(metrics, HasSubstr("paceline_store_commits_total "));
  EXPECT_THAT(metrics, HasSubstr("paceline_master_leader 1\n"));
  // The cycles that placed the 1,000 tasks were timed: a p99 that is not zero.
  EXPECT_THAT(metrics, HasSubstr("paceline_scheduling_cycle_seconds_count "));
  EXPECT_THAT(
      metrics,
      ::testing::Not(HasSubstr("paceline_scheduling_cycle_seconds{quantile=\"0.99\"} 0.000000\n")));
}

TEST_F(BatchE2E, KillingARunningJobKillsEveryTaskWithinTheGrace) {
  TestCluster c;
  CreatePool(c);
  uint64_t job = c.CreateJob("/e2e", R"(
name: sleepers
instances: 200
task:
  command: "sleep 600"
  resources: {cpu: 0.02, memory: 8Mi}
  kill_grace: 5s
)");
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return Count(j, "RUNNING") == 200; }, absl::Seconds(120)))
      << c.Cli({"job", "get", std::to_string(job)}).out;
  absl::Time kill_at = absl::Now();
  RunResult kill = c.Cli({"job", "kill", std::to_string(job)});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "KILLED"; }, absl::Seconds(60)))
      << c.Cli({"job", "get", std::to_string(job)}).out;
  // Generous for loaded sanitizer runs; the grace itself is shown by the signal below.
  EXPECT_LT(absl::Now() - kill_at, absl::Seconds(45));
  Json got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(Count(got["job"], "KILLED"), 200u) << got.dump();
  // `sleep` dies of the SIGTERM that starts the grace: no task needed the SIGKILL at its end.
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  ASSERT_EQ(tasks["tasks"].size(), 200u);
  for (const Json& t : tasks["tasks"]) EXPECT_EQ(t["signal"], 15) << t.dump();
  Json pools = c.CliJson({"pool", "list"});
  for (const Json& p : pools["pools"]) {
    for (const Json& d : p["dimensions"]) EXPECT_EQ(d["allocation"], "0") << p["path"];
  }
  Json t = c.CliJson({"task", "get", absl::StrCat(job, "/0")});
  EXPECT_EQ(t["task"]["reason"], "KILLED_BY_USER");
}

TEST_F(BatchE2E, AFailingCommandRunsOnePlusMaxFailuresTimesThenFails) {
  TestCluster c({.agents = 1});
  CreatePool(c);
  uint64_t job = c.CreateJob("/e2e", R"(
name: failing
instances: 3
task:
  command: "exit 1"
  resources: {cpu: 0.1, memory: 8Mi}
  restart: {policy: on-failure, max_failures: 3, initial_backoff: 100ms, max_backoff: 1s}
)");
  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
  EXPECT_EQ(wait.exit_code, 1);
  EXPECT_THAT(wait.err, HasSubstr("ended FAILED"));
  for (int i = 0; i < 3; ++i) {
    Json t = c.CliJson({"task", "get", absl::StrCat(job, "/", i)});
    EXPECT_EQ(t["task"]["state"], "FAILED");
    EXPECT_EQ(t["task"]["exit_code"], 1);
    EXPECT_EQ(t["task"]["reason"], "EXIT_NONZERO");
    EXPECT_EQ(t["task"]["failures"], 4);
    ASSERT_EQ(t["runs"].size(), 4u) << t.dump();
    for (const Json& r : t["runs"]) EXPECT_EQ(r["final_state"], "FAILED");
    EXPECT_THAT(std::string(t["runs"].back()["message"]),
                HasSubstr("no more restarts: 4 failed runs (max_failures 3)"));
  }
}

TEST_F(BatchE2E, TasksOfAKilledAgentAreLostAndRunElsewhere) {
  TestCluster c({.agents = 2, .agent_cpu = "1", .host_timeout = "3s"});
  CreatePool(c);
  uint64_t job = c.CreateJob("/e2e", R"(
name: movers
instances: 2
task:
  command: "sleep 600"
  resources: {cpu: 0.5, memory: 8Mi}
  restart: {policy: on-failure, max_failures: 0}
)");
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return Count(j, "RUNNING") == 2; }, absl::Seconds(60)));
  Json before = c.CliJson({"task", "list", std::to_string(job)});
  std::string victim = before["tasks"][0]["host"];
  int victim_index = victim == c.agent_name(0) ? 0 : 1;
  absl::Time killed_at = absl::Now();
  c.agent(victim_index).Signal(SIGKILL);
  ASSERT_TRUE(c.agent(victim_index).WaitExit(absl::Seconds(10)).has_value());

  // Within the host timeout (3 s) plus a few cycles, the lost tasks run again elsewhere.
  std::string survivor = c.agent_name(1 - victim_index);
  bool moved = WaitFor(
      [&] {
        Json tasks = c.CliJson({"task", "list", std::to_string(job)});
        for (const Json& t : tasks["tasks"]) {
          if (t["state"] != "RUNNING" || t["host"] != survivor) return false;
        }
        return true;
      },
      absl::Seconds(30));
  ASSERT_TRUE(moved);
  EXPECT_LT(absl::Now() - killed_at, absl::Seconds(20));
  Json t = c.CliJson({"task", "events", absl::StrCat(job, "/0")});
  bool saw_lost = false;
  for (const Json& e : t["events"]) saw_lost |= e["state"] == "LOST" && e["host"] == victim;
  EXPECT_TRUE(saw_lost) << t.dump();

  // The agent comes back: the master kills the runs it no longer owns.
  c.StartAgent(victim_index);
  ASSERT_TRUE(c.WaitForHosts(2));
  ASSERT_EQ(c.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "KILLED"; }, absl::Seconds(30)));
  bool orphans_gone = WaitFor(
      [&] {
        Json hosts = c.CliJson({"host", "list"});
        for (const Json& h : hosts["hosts"]) {
          if (h["tasks"] != 0) return false;
        }
        return true;
      },
      absl::Seconds(30));
  EXPECT_TRUE(orphans_gone);
}

TEST_F(BatchE2E, WrongTokenAndMalformedRequestsChangeNothing) {
  TestCluster c({.agents = 1});
  CreatePool(c);
  RunResult wrong = RunPaceline(
      {"--addr", "127.0.0.1:1", "--timeout", "1s", "--token", "x", "job", "list"}, c.dir());
  EXPECT_NE(wrong.exit_code, 0);

  // Straight at the API, past the CLI's own checks.
  std::string addr = nlohmann::json::parse(ReadFile(c.dir() + "/master/master.json"))["grpc"];
  auto stub =
      v1::JobService::NewStub(grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
  v1::CreateJobRequest req;
  req.set_pool("/e2e");
  req.set_spec_yaml(
      "name: x\ninstances: 1\ntask: {command: true, resources: {cpu: 1, memory: 1Gi}}\n");
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer not-the-token");
    v1::CreateJobResponse resp;
    grpc::Status s = stub->CreateJob(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;  // no token at all
    v1::CreateJobResponse resp;
    EXPECT_EQ(stub->CreateJob(&ctx, req, &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  std::string token = ReadFile(c.dir() + "/master/token");
  token.erase(token.find_last_not_of("\n") + 1);
  req.set_spec_yaml(
      "name: x\ninstances: 1\ntask:\n  command: true\n  resources: {cpu: 1, memroy: 1Gi}\n");
  req.set_spec_name("bad.yaml");
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    v1::CreateJobResponse resp;
    grpc::Status s = stub->CreateJob(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("bad.yaml:5:"));
    EXPECT_THAT(s.error_message(), HasSubstr("task.resources.memroy"));
  }
  req.set_pool("/no-such-pool");
  req.set_spec_yaml(
      "name: x\ninstances: 1\ntask: {command: true, resources: {cpu: 1, memory: 1Gi}}\n");
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    v1::CreateJobResponse resp;
    EXPECT_EQ(stub->CreateJob(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  Json jobs = c.CliJson({"job", "list"});
  EXPECT_TRUE(!jobs.contains("jobs") || jobs["jobs"].empty()) << jobs.dump();
}

}  // namespace
}  // namespace paceline::e2e

namespace paceline::e2e {
namespace {

// Each run appends "start RUN NANOS" and "stop RUN NANOS" to a file per instance; after the
// master is killed with SIGKILL in the middle of the job and restarted, the job still
// completes, and no instance ever had two runs alive at once.
TEST(MasterCrashE2E, KilledMasterRecoversAndNoInstanceRunsTwiceAtOnce) {
  TestCluster c({.agents = 2});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  std::string markers = MakeMarkersDir(c.dir());
  constexpr int kInstances = kSanitized ? 500 : 2000;
  uint64_t job = c.CreateJob("/e2e", absl::StrCat(R"yaml(
name: crash-test
instances: )yaml",
                                                  kInstances, R"yaml(
task:
  command: ')yaml",
                                                  MarkedCommand("sleep 0.05"), R"yaml('
  resources: {cpu: 0.05, memory: 8Mi}
  env: {MARKERS: )yaml",
                                                  markers, R"yaml(}
  restart: {policy: on-failure, max_failures: 3}
)yaml"));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return Count(j, "SUCCEEDED") >= kInstances * 3 / 10; },
      absl::Seconds(120)));
  c.master().Signal(SIGKILL);
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
  c.StartMaster();
  ASSERT_TRUE(c.WaitForHosts(2, absl::Seconds(60)));
  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "240s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;

  // The acknowledged job is there, and done; filters and paging work.
  EXPECT_EQ(c.CliJson({"job", "list", "--since", "1h", "--state", "SUCCEEDED"})["jobs"].size(), 1u);
  EXPECT_TRUE(c.CliJson({"job", "list", "--state", "FAILED"})["jobs"].empty());
  EXPECT_TRUE(c.CliJson({"job", "list", "--page-token", std::to_string(job)})["jobs"].empty());
  Json list = c.CliJson({"job", "list"});
  ASSERT_EQ(list["jobs"].size(), 1u);
  EXPECT_EQ(list["jobs"][0]["state"], "SUCCEEDED");

  ExpectRunsNeverOverlap(markers, kInstances);
}

// The store's file and its write-ahead log, in bytes.
uintmax_t StoreBytes(const std::string& data_dir) {
  uintmax_t bytes = 0;
  for (const char* name : {"/paceline.db", "/paceline.db-wal"}) {
    std::error_code ec;
    uintmax_t n = std::filesystem::file_size(data_dir + name, ec);
    if (!ec) bytes += n;
  }
  return bytes;
}

// A job of 1,000,000 instances is one call and one small commit: its instances have no rows
// until they first change state. Killed with SIGKILL before any instance ran, the master comes
// back with the whole job, every instance pending.
TEST(MasterCrashE2E, AMillionInstanceJobIsOneSmallCommitAndSurvivesAKill9BeforeAnyInstanceRan) {
  TestCluster c({.agents = 0});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const std::string data = c.dir() + "/master";
  const uintmax_t before = StoreBytes(data);
  uint64_t job = c.CreateJob("/e2e", R"yaml(
name: a-million
instances: 1000000
task:
  command: 'true'
  resources: {cpu: 0.01, memory: 1Mi}
)yaml");
  ASSERT_GT(job, 0u);
  // One row for the job: far less than a byte per instance (1,000,000 rows would be ~40 MB).
  EXPECT_LT(StoreBytes(data) - before, uintmax_t{256} << 10);
  Json got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(Count(got["job"], "PENDING"), 1'000'000u) << got["job"].dump();

  c.master().Signal(SIGKILL);
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
  c.StartMaster();
  got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(got["job"]["instances"], 1'000'000) << got["job"].dump();
  EXPECT_EQ(Count(got["job"], "PENDING"), 1'000'000u) << got["job"].dump();
  Json last = c.CliJson({"task", "get", absl::StrCat(job, "/999999")});
  EXPECT_EQ(last["task"]["state"], "PENDING") << last.dump();
}

}  // namespace
}  // namespace paceline::e2e

namespace paceline::e2e {
namespace {

// `pool list` shows per pool and dimension reservation, limit, share, entitlement, allocation
// and demand; `pool get` shows the queue with positions and reasons; `task get` / `job get`
// say why a task waits, including a placement that can never succeed.
TEST(ExplainE2E, PoolsQueuesAndWhyPending) {
  TestCluster c;
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  uint64_t big = c.CreateJob("/e2e", R"(
name: big
instances: 20
task:
  command: "sleep 600"
  resources: {cpu: 1, memory: 16Mi}
  kill_grace: 1s
)");
  ASSERT_TRUE(c.WaitForJob(
      big, [](const Json& j) { return Count(j, "RUNNING") == 6; }, absl::Seconds(60)));

  Json pools = c.CliJson({"pool", "list"});
  const Json* e2e = nullptr;
  for (const Json& p : pools["pools"]) {
    if (p["path"] == "/e2e") e2e = &p;
  }
  ASSERT_NE(e2e, nullptr) << pools.dump();
  const Json& cpu = (*e2e)["dimensions"][0];
  EXPECT_EQ(cpu["name"], "cpu");
  EXPECT_EQ(cpu["reservation"], "2000");
  EXPECT_EQ(cpu["limit"], "6000");
  EXPECT_EQ(cpu["share"], 1);
  EXPECT_EQ(cpu["entitlement"], "6000");
  EXPECT_EQ(cpu["allocation"], "6000");
  EXPECT_EQ(cpu["demand"], "6000") << "demand is capped at the limit";
  EXPECT_EQ((*e2e)["queued_gangs"], 14);
  RunResult table = c.Cli({"pool", "list"});
  EXPECT_THAT(table.out, HasSubstr("ENTITLEMENT"));

  Json pool = c.CliJson({"pool", "get", "/e2e"});
  ASSERT_EQ(pool["queue"].size(), 14u);
  EXPECT_EQ(pool["queue"][0]["position"], 1);
  EXPECT_THAT(std::string(pool["queue"][0]["reason"]), HasSubstr("cpu"));
  EXPECT_THAT(std::string(pool["queue"][1]["reason"]), HasSubstr("waits behind"));

  Json task = c.CliJson({"task", "get", absl::StrCat(big, "/19")});
  EXPECT_EQ(task["task"]["state"], "PENDING");
  EXPECT_FALSE(std::string(task["task"]["pending_reason"]).empty());

  // A constraint no host meets: reported as never fitting, with the filter that refused.
  uint64_t pinned = c.CreateJob("/e2e", R"(
name: pinned
instances: 1
task:
  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  constraints:
    - {host_label: zone, op: in, values: [z]}
)");
  ASSERT_EQ(c.Cli({"job", "kill", std::to_string(big)}).exit_code, 0);
  bool explained = WaitFor(
      [&] {
        Json t = c.CliJson({"task", "get", absl::StrCat(pinned, "/0")});
        return std::string(t["task"]["pending_reason"]).find("never fits") != std::string::npos;
      },
      absl::Seconds(30));
  Json t = c.CliJson({"task", "get", absl::StrCat(pinned, "/0")});
  EXPECT_TRUE(explained) << t.dump();
  EXPECT_THAT(std::string(t["task"]["pending_reason"]), HasSubstr("3 hosts"));
  RunResult job_get = c.Cli({"job", "get", std::to_string(pinned)});
  EXPECT_THAT(job_get.out, HasSubstr("waiting: instance 0: never fits"));
}

}  // namespace
}  // namespace paceline::e2e

namespace paceline::e2e {
namespace {

uint32_t TaskRun(TestCluster& c, uint64_t job, int i, std::string* state) {
  Json t = c.CliJson({"task", "get", absl::StrCat(job, "/", i)});
  *state = t["task"]["state"];
  return t["task"]["run"];
}

TEST(OperationsE2E, KillOneInstanceRestartInstancesThenDeleteTheJob) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  uint64_t job = c.CreateJob("/e2e", R"(
name: ops
instances: 3
task:
  command: "sleep 600"
  resources: {cpu: 0.1, memory: 8Mi}
  kill_grace: 1s
)");
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return Count(j, "RUNNING") == 3; }, absl::Seconds(60)));
  ASSERT_EQ(c.Cli({"task", "kill", absl::StrCat(job, "/0")}).exit_code, 0);
  std::string state;
  ASSERT_TRUE(WaitFor([&] { return TaskRun(c, job, 0, &state) == 1 && state == "KILLED"; },
                      absl::Seconds(20)));
  EXPECT_EQ(c.CliJson({"job", "get", std::to_string(job)})["job"]["state"], "RUNNING");

  RunResult restart = c.Cli({"job", "restart", std::to_string(job), "--instances", "0-1"});
  ASSERT_EQ(restart.exit_code, 0) << restart.err;
  EXPECT_THAT(restart.out, HasSubstr("2 instances restarting"));
  for (int i : {0, 1}) {
    EXPECT_TRUE(WaitFor([&] { return TaskRun(c, job, i, &state) == 2 && state == "RUNNING"; },
                        absl::Seconds(30)))
        << "instance " << i << " is " << state;
  }
  EXPECT_EQ(TaskRun(c, job, 2, &state), 1u) << "instance 2 was not asked to restart";
  EXPECT_EQ(c.Cli({"job", "restart", std::to_string(job), "--instances", "5"}).exit_code, 1);
  EXPECT_THAT(c.Cli({"job", "restart", std::to_string(job), "--instances", "x"}).err,
              HasSubstr("--instances: 'x' is not N or FIRST-LAST"));

  RunResult early = c.Cli({"job", "delete", std::to_string(job)});
  EXPECT_EQ(early.exit_code, 1);
  EXPECT_THAT(early.err, HasSubstr("kill it first"));
  ASSERT_EQ(c.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "KILLED"; }, absl::Seconds(30)));
  ASSERT_EQ(c.Cli({"job", "delete", std::to_string(job)}).exit_code, 0);
  RunResult gone = c.Cli({"job", "get", std::to_string(job)});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.err, HasSubstr("not found"));
}

}  // namespace
}  // namespace paceline::e2e
