// End to end: usage accounting (docs/operations.md, "Usage accounting") on a real master and
// real agents running real processes. Short jobs of known lengths are counted by pool, job,
// owner and user as `paceline usage` shows them (JSON, CSV, the JSON gateway), each run once:
// runs live across a kill -9 of the master, and a run that ended while no master ran, are
// counted once; a master started again counts nothing again. /metrics has the counters.

#include <signal.h>

#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 2, limit: 4}
  memory: {reservation: 1Gi}
)";

constexpr double kMi = 1024.0 * 1024.0;

// The seconds each run of `job` was RUNNING, as the master recorded them (task list).
std::vector<double> RunSeconds(TestCluster& c, uint64_t job) {
  std::vector<double> out;
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["run"], 1) << t.dump();
    out.push_back(double(JsonInt(t.value("finished_at_unix_ms", Json())) -
                         JsonInt(t.value("started_at_unix_ms", Json()))) /
                  1000.0);
  }
  return out;
}

double Sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// `paceline usage --by BY` as entries by key.
std::map<std::string, Json> Usage(TestCluster& c, const std::string& by) {
  Json doc = c.CliJson({"usage", "--since", "3h", "--by", by});
  EXPECT_EQ(doc["group_by"], by);
  std::map<std::string, Json> out;
  for (const Json& e : doc["entries"]) out[e["key"].get<std::string>()] = e;
  return out;
}

void ExpectRuns(const Json& entry, double cpu, double mem_bytes, const std::vector<double>& runs) {
  const double seconds = Sum(runs);
  EXPECT_EQ(entry["tasks"], static_cast<int64_t>(runs.size())) << entry.dump();
  // The master's own times, to its rounding (a microsecond per run and dimension).
  EXPECT_NEAR(entry["cpu_seconds"].get<double>(), cpu * seconds, 0.01) << entry.dump();
  EXPECT_NEAR(entry["memory_byte_seconds"].get<double>(), mem_bytes * seconds, mem_bytes * 0.01)
      << entry.dump();
  EXPECT_EQ(entry["gpu_seconds"].get<double>(), 0.0);
}

void KillMaster(TestCluster& c) {
  c.master().Signal(SIGKILL);
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
}

TEST(UsageE2E, RunsAreCountedOnceByTheirLengthAcrossMasterRestarts) {
  TestCluster c(ClusterOptions{.agents = 2});
  ASSERT_EQ(c.Cli({"pool", "create", "/acct", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t a = c.CreateJob("/acct", R"(
name: short
owner: team-a
instances: 3
task:
  command: "sleep 3"
  resources: {cpu: 0.5, memory: 64Mi}
)");
  ASSERT_GT(a, 0u);
  RunResult wait = c.Cli({"job", "wait", std::to_string(a), "--timeout", "60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  const std::vector<double> runs_a = RunSeconds(c, a);
  ASSERT_EQ(runs_a.size(), 3u);
  for (double s : runs_a) {
    EXPECT_GE(s, 2.9) << "each run sleeps 3 s";
    EXPECT_LT(s, 8.0) << "each run sleeps 3 s";
  }

  std::map<std::string, Json> by_job = Usage(c, "job");
  ASSERT_TRUE(by_job.contains(std::to_string(a)));
  const Json usage_a = by_job[std::to_string(a)];
  ExpectRuns(usage_a, 0.5, 64 * kMi, runs_a);
  EXPECT_EQ(usage_a["job_name"], "short");
  EXPECT_EQ(usage_a["pool"], "/acct");
  ExpectRuns(Usage(c, "pool")["/acct"], 0.5, 64 * kMi, runs_a);
  ExpectRuns(Usage(c, "owner")["team-a"], 0.5, 64 * kMi, runs_a);
  ExpectRuns(Usage(c, "user")["admin"], 0.5, 64 * kMi, runs_a);  // the bootstrap token's user

  // CSV, a header and a line per pool.
  RunResult csv = c.Cli({"-o", "csv", "usage", "--since", "3h"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out,
              StartsWith("pool,cpu_seconds,memory_byte_seconds,gpu_seconds,tasks\n/acct,"));
  EXPECT_THAT(csv.out, HasSubstr(",3\n"));
  // Hourly: the same usage, in the hour (or two) it fell in.
  Json hourly = c.CliJson({"usage", "--since", "3h", "--hourly"});
  int64_t hourly_tasks = 0;
  for (const Json& e : hourly["entries"]) {
    EXPECT_GT(JsonInt(e["hour_unix_ms"]), 0) << e.dump();
    hourly_tasks += JsonInt(e["tasks"]);
  }
  EXPECT_EQ(hourly_tasks, 3);
  // The counters of /metrics.
  std::string metrics = c.HttpGet("/metrics");
  EXPECT_THAT(metrics, HasSubstr("paceline_pool_usage_tasks_total{pool=\"/acct\"} 3\n"));
  EXPECT_THAT(metrics, HasSubstr("# TYPE paceline_pool_usage_cpu_seconds_total counter\n"));
  EXPECT_THAT(metrics, HasSubstr("paceline_pool_usage_cpu_seconds_total{pool=\"/acct\"} "));
  EXPECT_THAT(metrics, HasSubstr("paceline_pool_usage_memory_byte_seconds_total{pool=\"/acct\"} "));

  // Runs live across a kill -9 of the master: one ends while no master runs, one after.
  const uint64_t b = c.CreateJob("/acct", R"(
name: long
instances: 1
task:
  command: "sleep 8"
  resources: {cpu: 0.25, memory: 32Mi}
)");
  const uint64_t d = c.CreateJob("/acct", R"(
name: ends-while-down
instances: 1
task:
  command: "sleep 2"
  resources: {cpu: 0.25, memory: 32Mi}
)");
  auto running = [](const Json& j) {
    return j.contains("task_counts") && j["task_counts"].value("RUNNING", 0) == 1;
  };
  ASSERT_TRUE(c.WaitForJob(b, running, absl::Seconds(30)));
  ASSERT_TRUE(c.WaitForJob(d, running, absl::Seconds(30)));
  KillMaster(c);
  absl::SleepFor(absl::Seconds(4));  // `d` exits on its agent meanwhile
  c.StartMaster();
  for (uint64_t job : {b, d}) {
    RunResult w = c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
    ASSERT_EQ(w.exit_code, 0) << w.err;
  }
  const std::vector<double> runs_b = RunSeconds(c, b);
  const std::vector<double> runs_d = RunSeconds(c, d);
  ASSERT_EQ(runs_b.size(), 1u);
  ASSERT_EQ(runs_d.size(), 1u);
  EXPECT_GE(runs_b[0], 7.9);
  EXPECT_GE(runs_d[0], 1.9);
  by_job = Usage(c, "job");
  EXPECT_EQ(by_job[std::to_string(a)], usage_a) << "the earlier runs are not counted again";
  ExpectRuns(by_job[std::to_string(b)], 0.25, 32 * kMi, runs_b);
  ExpectRuns(by_job[std::to_string(d)], 0.25, 32 * kMi, runs_d);
  const std::map<std::string, Json> by_pool = Usage(c, "pool");
  EXPECT_EQ(by_pool.at("/acct")["tasks"], 5);

  // A master started again reads the same, and counts nothing new.
  KillMaster(c);
  c.StartMaster();
  EXPECT_EQ(Usage(c, "pool"), by_pool);
  metrics = c.HttpGet("/metrics");
  EXPECT_THAT(metrics, HasSubstr("# TYPE paceline_pool_usage_tasks_total counter\n"));
  EXPECT_THAT(metrics, ::testing::Not(HasSubstr("paceline_pool_usage_tasks_total{pool=")))
      << "counters start from zero with the master";

  // The JSON gateway answers the same; bad input is refused and names what is wrong.
  TestCluster::HttpResult got =
      c.Http("GET", "/api/v1/PoolService/GetUsage?group_by=pool&pool=/acct");
  ASSERT_EQ(got.status, 200) << got.body;
  Json body = Json::parse(got.body);
  ASSERT_EQ(body["entries"].size(), 1u) << got.body;
  EXPECT_EQ(body["entries"][0]["key"], "/acct");
  EXPECT_EQ(JsonInt(body["entries"][0]["tasks"]), 5);
  TestCluster::HttpResult bad = c.Http("GET", "/api/v1/PoolService/GetUsage?group_by=color");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.body, HasSubstr("group_by"));
  bad = c.Http("GET", "/api/v1/PoolService/GetUsage?since_unix_ms=5&until_unix_ms=4");
  EXPECT_EQ(bad.status, 400) << bad.body;
  RunResult cli_bad = c.Cli({"usage", "--since", "yesterday"});
  EXPECT_NE(cli_bad.exit_code, 0);
  EXPECT_THAT(cli_bad.err, HasSubstr("--since"));
  EXPECT_NE(c.Cli({"usage", "--by", "color"}).exit_code, 0);
  // A pool nobody ran in: nothing, not an error.
  Json none = c.CliJson({"usage", "--pool", "/nowhere"});
  EXPECT_TRUE(none["entries"].empty()) << none.dump();
}

}  // namespace
}  // namespace paceline::e2e
