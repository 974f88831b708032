// End to end: long-running services and rolling updates on a real master and real agents.
// The acceptance scenarios of the services issue: an update in batches that keeps the service
// available, an update that fails and rolls back, pause and resume, a stale version refused,
// and the dry-run diff.

#include <map>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 2, limit: 4}\n";

// A web service that answers its HTTP health check; VERSION is the only thing that changes.
std::string WebService(int instances, const std::string& version) {
  return absl::StrReplaceAll(R"(
name: web
type: service
instances: INSTANCES
task:
  command: "exec python3 -m http.server $PACELINE_PORT_HTTP --bind 127.0.0.1"
  env: {VERSION: "@V@"}
  ports: [http]
  resources: {cpu: 0.1, memory: 64Mi}
  kill_grace: 2s
  health:
    http: {port: http, path: /}
    interval: 500ms
    timeout: 1s
    failures: 2
update:
  min_healthy_time: 1s
)",
                             {{"INSTANCES", std::to_string(instances)}, {"@V@", version}});
}

std::string Sleeper(int instances, const std::string& command) {
  return absl::StrCat("name: sleeper\ntype: service\ninstances: ", instances,
                      "\ntask:\n  command: \"", command,
                      "\"\n  resources: {cpu: 0.1, memory: 16Mi}\n  kill_grace: 1s\n"
                      "  restart: {initial_backoff: 200ms, max_backoff: 1s}\n"
                      "update:\n  min_healthy_time: 1s\n");
}

class ServiceE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = std::make_unique<TestCluster>(ClusterOptions{.agents = 2});
    RunResult r = c_->Cli({"pool", "create", "/svc", "-f", c_->WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  Json Job(uint64_t id) { return c_->CliJson({"job", "get", std::to_string(id)}); }
  Json Tasks(uint64_t id) { return c_->CliJson({"task", "list", std::to_string(id)}); }
  uint32_t Running(uint64_t id) {
    Json j = Job(id)["job"];
    return j.contains("task_counts") ? j["task_counts"].value("RUNNING", 0u) : 0u;
  }
  RunResult Update(uint64_t id, const std::string& spec, std::vector<std::string> flags) {
    std::vector<std::string> args = {"job", "update", std::to_string(id), "-f",
                                     c_->WriteFile("update.yaml", spec)};
    args.insert(args.end(), flags.begin(), flags.end());
    return c_->Cli(args);
  }
  Json LatestUpdate(uint64_t id) {
    return c_->CliJson({"update", "get", std::to_string(id)})["update"];
  }
  std::unique_ptr<TestCluster> c_;
};

TEST_F(ServiceE2E, RollingUpdateInBatchesOfTwoKeepsEightOfTenAvailable) {
  uint64_t job = c_->CreateJob("/svc", WebService(10, "1"));
  ASSERT_TRUE(c_->WaitForJob(
      job, [](const Json& j) { return j.value("healthy", 0) == 10; }, absl::Seconds(60)))
      << Job(job).dump();

  RunResult r = Update(job, WebService(10, "2"), {"--batch-size", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("update 1 to version 2 (10 updated"));
  // Sample availability until the update ends: RUNNING and HEALTHY count as available.
  uint32_t worst = 0;
  int samples = 0;
  std::string state;
  absl::Time deadline = absl::Now() + absl::Seconds(120);
  while (absl::Now() < deadline) {
    Json j = Job(job);
    uint32_t healthy = j["job"].value("healthy", 0);
    worst = std::max(worst, 10 - std::min(10u, healthy));
    ++samples;
    state = j["update"].value("state", "");
    if (state != "ROLLING_FORWARD") break;
  }
  EXPECT_EQ(state, "SUCCEEDED");
  EXPECT_GE(samples, 3) << "the update was seen in progress (a sample is a CLI call: slow under "
                           "sanitizers)";
  EXPECT_LE(worst, 2u) << "never more than the batch size unavailable";
  Json tasks = Tasks(job);
  ASSERT_EQ(tasks["tasks"].size(), 10u);
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["version"], "2") << t.dump();
    EXPECT_EQ(t["state"], "RUNNING") << t.dump();
  }
  EXPECT_EQ(Job(job)["job"]["version"], "2");
}

TEST_F(ServiceE2E, AFailingUpdateRollsBackToTheOldVersion) {
  uint64_t job = c_->CreateJob("/svc", Sleeper(4, "sleep 1000"));
  ASSERT_TRUE(WaitFor([&] { return Running(job) == 4; }, absl::Seconds(30)));
  RunResult r = Update(job, Sleeper(4, "exit 3"),
                       {"--batch-size", "2", "--max-failures", "1", "--rollback-on-failure"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult wait = c_->Cli({"update", "wait", std::to_string(job), "--timeout", "90s"});
  EXPECT_NE(wait.exit_code, 0) << "a rolled-back update is not a success";
  Json u = LatestUpdate(job);
  EXPECT_EQ(u["state"], "ROLLED_BACK") << u.dump();
  EXPECT_THAT(u.value("message", ""), HasSubstr("instances failed on version 2"));
  ASSERT_TRUE(WaitFor([&] { return Running(job) == 4; }, absl::Seconds(30)));
  Json got = Job(job);
  EXPECT_EQ(got["job"]["version"], "3");
  EXPECT_THAT(got.value("spec_yaml", ""), HasSubstr("sleep 1000"));
  Json tasks = Tasks(job);
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["version"], "3") << t.dump();
    EXPECT_EQ(t["state"], "RUNNING") << t.dump();
  }
}

TEST_F(ServiceE2E, PauseResumeStaleVersionAndDryRun) {
  uint64_t job = c_->CreateJob("/svc", Sleeper(4, "sleep 1000"));
  ASSERT_TRUE(WaitFor([&] { return Running(job) == 4; }, absl::Seconds(30)));
  std::string id = std::to_string(job);

  // Dry run of a scale-up plus a spec change: every instance updated, two added.
  RunResult dry = Update(job, Sleeper(6, "sleep 2000"), {"--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("added:     4,5"));
  EXPECT_THAT(dry.out, HasSubstr("updated:   0,1,2,3"));
  EXPECT_THAT(dry.out, HasSubstr("removed:   none"));
  EXPECT_THAT(dry.out, HasSubstr("unchanged: none"));
  EXPECT_EQ(Job(job)["job"]["version"], "1") << "a dry run changes nothing";

  RunResult stale = Update(job, Sleeper(4, "sleep 2000"), {"--version", "7"});
  EXPECT_NE(stale.exit_code, 0);
  EXPECT_THAT(stale.err, HasSubstr("is at version 1, not 7"));

  ASSERT_EQ(Update(job, Sleeper(6, "sleep 2000"), {"--batch-size", "1", "--min-healthy-time", "2s"})
                .exit_code,
            0);
  RunResult again = Update(job, Sleeper(6, "sleep 3000"), {});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr("in flight"));

  ASSERT_TRUE(WaitFor([&] { return LatestUpdate(job).value("done", 0) >= 1; }, absl::Seconds(30)));
  ASSERT_EQ(c_->Cli({"update", "pause", id}).exit_code, 0);
  // What was in flight finishes; nothing new starts.
  ASSERT_TRUE(
      WaitFor([&] { return LatestUpdate(job).value("in_flight", 0) == 0; }, absl::Seconds(30)));
  uint32_t done = LatestUpdate(job).value("done", 0);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // a paused update must not move
  Json paused = LatestUpdate(job);
  EXPECT_EQ(paused.value("done", 0), done);
  EXPECT_EQ(paused["paused"], true);
  EXPECT_LT(done, 6u);

  ASSERT_EQ(c_->Cli({"update", "resume", id}).exit_code, 0);
  RunResult wait = c_->Cli({"update", "wait", id, "--timeout", "90s"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
  ASSERT_TRUE(WaitFor([&] { return Running(job) == 6; }, absl::Seconds(30)));
  RunResult list = c_->Cli({"update", "list", id});
  EXPECT_THAT(list.out, HasSubstr("SUCCEEDED"));
}

TEST_F(ServiceE2E, AnInPlaceUpdateKeepsEachInstanceOnItsHost) {
  // Two instances per host, so that where each one goes matters.
  auto spread = [](std::string spec) {
    return spec.replace(spec.find("  kill_grace"), 0, "  constraints: [{max_per_host: 2}]\n");
  };
  uint64_t job = c_->CreateJob("/svc", spread(Sleeper(4, "sleep 1000")));
  ASSERT_TRUE(WaitFor([&] { return Running(job) == 4; }, absl::Seconds(30)));
  std::map<uint32_t, std::string> before;
  Json tasks = Tasks(job);
  for (const Json& t : tasks["tasks"]) before[t.value("instance", 0u)] = t["host"];
  ASSERT_EQ(
      Update(job, spread(Sleeper(4, "sleep 2000")), {"--batch-size", "2", "--in-place"}).exit_code,
      0);
  RunResult wait = c_->Cli({"update", "wait", std::to_string(job), "--timeout", "60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  Json after = Tasks(job);
  for (const Json& t : after["tasks"]) {
    EXPECT_EQ(t["version"], "2");
    EXPECT_EQ(t["host"], before[t.value("instance", 0u)]) << t.dump();
  }
}

TEST_F(ServiceE2E, ACrashLoopingInstanceIsThrottledAndSaysWhen) {
  std::string spec = Sleeper(1, "exit 0");
  spec.replace(spec.find("initial_backoff: 200ms, max_backoff: 1s"), 39,
               "initial_backoff: 5s, max_backoff: 10s");
  uint64_t job = c_->CreateJob("/svc", spec);
  ASSERT_TRUE(WaitFor(
      [&] {
        return Job(job).value("pending_reason", "").find("crash-looping") != std::string::npos;
      },
      absl::Seconds(30)))
      << Job(job).dump();
  EXPECT_THAT(Job(job).value("pending_reason", ""), HasSubstr("next try at"));
}

TEST_F(ServiceE2E, ARunningBatchJobGrowsAndShrinksThroughAnUpdate) {
  uint64_t job = c_->CreateJob("/svc", R"(
name: spark
instances: 2
task:
  command: "sleep 20"
  resources: {cpu: 0.1, memory: 16Mi}
)");
  // The first two run long enough for the three added ones to start beside them, even with
  // sanitizers on a loaded machine.
  std::string id = std::to_string(job);
  ASSERT_TRUE(WaitFor([&] { return Running(job) == 2; }, absl::Seconds(30)));
  // The driver asks for three more executors, as a framework would through the API.
  RunResult grow = c_->Cli({"job", "update", id, "--instances", "5"});
  ASSERT_EQ(grow.exit_code, 0) << grow.err;
  EXPECT_THAT(grow.out, HasSubstr("3 added"));
  ASSERT_TRUE(WaitFor([&] { return Running(job) == 5; }, absl::Seconds(30))) << Job(job).dump();
  // ... then gives two back: the highest ids go.
  RunResult shrink = c_->Cli({"job", "update", id, "--instances", "3"});
  ASSERT_EQ(shrink.exit_code, 0) << shrink.err;
  EXPECT_THAT(shrink.out, HasSubstr("2 removed"));
  RunResult wait = c_->Cli({"job", "wait", id, "--timeout", "60s"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
  Json got = Job(job);
  EXPECT_EQ(got["job"]["instances"], 3);
  EXPECT_EQ(got["job"]["task_counts"]["SUCCEEDED"], 3) << got.dump();
}

}  // namespace
}  // namespace paceline::e2e
