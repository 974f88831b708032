// A master on a real PostgreSQL server: jobs run and survive a `kill -9` of the master; the
// database goes away for 20 s under running work and the master heals by itself; and
// `paceline store migrate` moves a SQLite cluster into PostgreSQL, where a master takes over.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/postgres_util.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

TEST(PostgresE2E, AJobRunsOnPostgresAndSurvivesAKilledMaster) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster c({.agents = 2, .store = pg->url()});
  Json info = c.CliJson({"info"});
  EXPECT_THAT(info.dump(), HasSubstr("postgres://"));
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  std::string markers = MakeMarkersDir(c.dir());
  constexpr int kInstances = 400;
  uint64_t job = c.CreateJob("/e2e", MarkedJob("pg", kInstances, markers, "sleep 0.05"));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return TasksIn(j, "SUCCEEDED") >= 100; }, absl::Seconds(120)));
  c.master().Signal(SIGKILL);
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
  c.StartMaster();
  // The new process waits for its predecessor's lease to run out, then leads.
  ASSERT_TRUE(c.WaitForHosts(2, absl::Seconds(60)));
  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "180s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  Json got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(TasksIn(got["job"], "SUCCEEDED"), static_cast<uint32_t>(kInstances));
  ExpectRunsNeverOverlap(markers, kInstances);
}

// PostgreSQL stops for 20 s while a service runs and a batch job goes on: changes are refused
// with a clear UNAVAILABLE, the running tasks keep running (no second run), every status update
// of the agents arrives exactly once (each batch instance has one run, SUCCEEDED), and the
// master takes changes again by itself once the database is back.
TEST(PostgresE2E, ADatabaseOutageIsUnavailableAndHealsByItself) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster c({.agents = 2, .host_timeout = "10s", .store = pg->url()});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  uint64_t service = c.CreateJob("/e2e", R"(
name: sleepers
instances: 10
task:
  command: "sleep 600"
  resources: {cpu: 0.05, memory: 8Mi}
)");
  std::string markers = MakeMarkersDir(c.dir());
  constexpr int kInstances = 150;
  uint64_t batch = c.CreateJob("/e2e", MarkedJob("steady", kInstances, markers, "sleep 2"));
  ASSERT_TRUE(c.WaitForJob(
      service, [](const Json& j) { return TasksIn(j, "RUNNING") == 10; }, absl::Seconds(60)));

  ASSERT_TRUE(pg->Stop().ok());
  absl::Time stopped = absl::Now();
  RunResult refused = c.Cli({"job", "create", "-f", c.WriteFile("late.yaml", R"(
name: late
instances: 1
task: {command: "true", resources: {cpu: 0.05, memory: 8Mi}}
)"),
                             "--pool", "/e2e"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("store is unavailable"));
  absl::SleepFor(absl::Seconds(20) - (absl::Now() - stopped));
  ASSERT_TRUE(pg->StartAgain().ok());

  // Scheduling resumes by itself: a new job runs to the end.
  RunResult created;
  ASSERT_TRUE(WaitFor(
      [&] {
        created = c.Cli({"job", "create", "-f", c.dir() + "/late.yaml", "--pool", "/e2e"});
        return created.exit_code == 0;
      },
      absl::Seconds(60)))
      << created.err;
  RunResult late = c.Cli(
      {"job", "wait", std::string(absl::StripAsciiWhitespace(created.out)), "--timeout", "120s"});
  EXPECT_EQ(late.exit_code, 0) << late.err;
  RunResult wait = c.Cli({"job", "wait", std::to_string(batch), "--timeout", "180s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  ExpectRunsNeverOverlap(markers, kInstances);
  // The service's tasks ran through the outage: still their first run.
  Json tasks = c.CliJson({"task", "list", std::to_string(service)});
  ASSERT_EQ(tasks["tasks"].size(), 10u);
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "RUNNING") << t.dump();
    EXPECT_EQ(t["run"], 1) << t.dump();
  }
}

TEST(PostgresE2E, StoreMigrateMovesASqliteClusterIntoPostgres) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  std::string sqlite_dir;
  uint64_t job = 0;
  Json before;
  std::string cluster_id;
  {
    TestCluster c({.agents = 1});
    ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
              0);
    job = c.CreateJob("/e2e", R"(
name: history
instances: 5
task:
  command: "exit 1"
  resources: {cpu: 0.05, memory: 8Mi}
  restart: {policy: on-failure, max_failures: 1, initial_backoff: 100ms}
)");
    c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
    before = c.CliJson({"task", "get", absl::StrCat(job, "/3")});
    ASSERT_EQ(before["runs"].size(), 2u) << before.dump();
    sqlite_dir = c.dir() + "/master";
    cluster_id = c.CliJson({"info"})["cluster_id"];
    c.master().Signal(SIGTERM);
    ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());

    RunResult migrate =
        RunPaceline({"store", "migrate", "--from", "sqlite:" + sqlite_dir, "--to", pg->url()});
    ASSERT_EQ(migrate.exit_code, 0) << migrate.err;
    EXPECT_THAT(migrate.out, HasSubstr("copied 1 pools, 1 jobs, 5 tasks"));
    EXPECT_THAT(migrate.out, HasSubstr("verified"));
    // Into a store that is not empty: refused, nothing changes.
    RunResult again =
        RunPaceline({"store", "migrate", "--from", "sqlite:" + sqlite_dir, "--to", pg->url()});
    EXPECT_EQ(again.exit_code, 1);
    EXPECT_THAT(again.err, HasSubstr("not empty"));
  }
  // A master on PostgreSQL sees the same cluster, run history included.
  TestCluster p({.agents = 1, .store = pg->url()});
  Json after = p.CliJson({"task", "get", absl::StrCat(job, "/3")});
  EXPECT_EQ(after["runs"], before["runs"]);
  EXPECT_EQ(p.CliJson({"job", "get", std::to_string(job)})["job"]["state"], "FAILED");
  EXPECT_EQ(p.CliJson({"info"})["cluster_id"], cluster_id);  // the same cluster, moved
}

// A master whose data directory belongs to another cluster (here: one that ran on SQLite) is
// refused at start against a database that holds a different cluster, saying what to do.
TEST(PostgresE2E, AMasterOfAnotherClusterIsRefusedAtStart) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster shared({.agents = 0, .store = pg->url()});
  std::string dir = MakeTempDir("pl-other");
  {
    TestCluster other({.agents = 0});
    other.master().Signal(SIGTERM);
    ASSERT_TRUE(other.master().WaitExit(absl::Seconds(10)).has_value());
    std::filesystem::copy(other.dir() + "/master", dir + "/master");
  }
  RunResult refused = RunPaceline({"master", "--data-dir", dir + "/master", "--store", pg->url(),
                                   "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("belongs to cluster"));
  EXPECT_THAT(refused.err, HasSubstr("give each cluster a database of its own"));
  // A wrong connection string names the server it could not reach.
  RunResult unreachable = RunPaceline({"master", "--data-dir", dir + "/x", "--store",
                                       "postgres://paceline@127.0.0.1:1/paceline", "--listen",
                                       "127.0.0.1:0", "--http-listen", "127.0.0.1:0"});
  EXPECT_NE(unreachable.exit_code, 0);
  EXPECT_THAT(unreachable.err, HasSubstr("cannot connect to postgres://paceline@127.0.0.1:1"));
  std::filesystem::remove_all(dir);
}

// The scale benchmark with its master on PostgreSQL, small: every task runs once, the store
// committed, and after the restart (which takes the lease again) every task is RUNNING.
TEST(PostgresE2E, ScaleBenchmarkRunsOnPostgres) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  RunResult r = RunPaceline({"bench", "scale", "--store", pg->url(), "--hosts", "50", "--tasks",
                             "1000", "--job-mix", "10:0.5,100:0.5", "--clients", "4",
                             "--heartbeat-interval", "1s", "--timeout", "120s", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["running"], 1000);
  EXPECT_EQ(j["submit_errors"], 0);
  EXPECT_EQ(j["store"]["backend"], "postgres");
  EXPECT_GT(j["store"]["commits"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["restart"]["running_after"], 1000);
  EXPECT_EQ(j["fleet"]["launches"], 1000);  // nothing launched twice, across the restart
}

}  // namespace
}  // namespace paceline::e2e
