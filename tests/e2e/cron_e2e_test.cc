// End to end: cron jobs on a real master and agent, with the seconds field so that a test sees
// several ticks in a few seconds.
//   - forbid: runs never overlap, ticks that come while a run is live are skipped; the keep
//     limits purge the older runs; `job runs` lists them newest first; `job get` shows the
//     schedule and the next tick; the cron job itself never runs.
//   - replace: the live run is killed when the next tick comes.
//   - a master killed with SIGKILL right at a tick, three times: its successor (the master
//     started again on the same store) creates each tick's run at most once, and after each
//     outage at most one late run.
//   - an invalid cron expression or time zone is refused at its line and column, and suspend
//     by `job update` stops the runs.

#include <csignal>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 2, limit: 2}
  memory: {reservation: 512Mi}
)";

std::string CronJob(const std::string& name, const std::string& command,
                    const std::string& schedule) {
  return absl::StrCat("name: ", name, R"(
type: batch
instances: 1
task:
  command: )",
                      command, R"(
  resources: {cpu: 0.1, memory: 16Mi}
  kill_grace: 1s
schedule: )",
                      schedule, "\n");
}

struct CronRun {
  uint64_t id = 0;
  std::string name;
  int64_t tick_ms = 0;
  std::string state;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
};

// `paceline job runs JOB -o json`, newest first.
std::vector<CronRun> Runs(TestCluster& c, const std::string& job) {
  Json j = c.CliJson({"job", "runs", job});
  std::vector<CronRun> out;
  for (const Json& r : j["runs"]) {
    out.push_back({static_cast<uint64_t>(JsonInt(r.value("job_id", Json()))), r.value("name", ""),
                   JsonInt(r.value("tick_unix_ms", Json())), r.value("state", ""),
                   JsonInt(r.value("started_at_unix_ms", Json())),
                   JsonInt(r.value("finished_at_unix_ms", Json()))});
  }
  return out;
}

// Polls until `pred(runs)` holds.
bool WaitForRuns(TestCluster& c, const std::string& job,
                 const std::function<bool(const std::vector<CronRun>&)>& pred,
                 absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred(Runs(c, job))) return true;
    absl::SleepFor(absl::Milliseconds(200));
  }
  return false;
}

TEST(CronE2E, ForbidNeverOverlapsAndTheKeepLimitsPurge) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  ASSERT_TRUE(c.WaitForHosts(1));
  // Every 2 s, each run 3 s: every other tick comes while a run is live.
  const uint64_t cron =
      c.CreateJob("/e2e", CronJob("report", "sleep 3",
                                  "{cron: \"*/2 * * * * *\", concurrency: forbid, "
                                  "keep_succeeded: 2, keep_failed: 0}"));
  ASSERT_GT(cron, 0u);
  ASSERT_TRUE(WaitForRuns(
      c, "report",
      [](const std::vector<CronRun>& runs) {
        int done = 0;
        for (const CronRun& r : runs) done += r.state == "SUCCEEDED";
        return done >= 2 && runs.size() >= 3;
      },
      absl::Seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a purge or two more

  std::vector<CronRun> runs = Runs(c, "report");
  ASSERT_GE(runs.size(), 2u);
  // Newest first, distinct ticks on even seconds, names from the tick.
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    EXPECT_GT(runs[i].tick_ms, runs[i + 1].tick_ms);
    // forbid: a run starts only after the one before it ended, so ticks are >= 4 s apart.
    EXPECT_GE(runs[i].tick_ms - runs[i + 1].tick_ms, 4000);
    if (runs[i].started_ms != 0 && runs[i + 1].finished_ms != 0) {
      EXPECT_GE(runs[i].started_ms, runs[i + 1].finished_ms) << "runs overlapped";
    }
  }
  for (const CronRun& r : runs) {
    EXPECT_EQ(r.tick_ms % 2000, 0);
    EXPECT_EQ(r.name.rfind("report-", 0), 0u) << r.name;
    EXPECT_EQ(r.name.size(), std::string("report-20260301120500").size()) << r.name;
  }
  // Kept: at most 2 succeeded ones, and the live one.
  int succeeded = 0;
  for (const CronRun& r : runs) succeeded += r.state == "SUCCEEDED";
  EXPECT_LE(succeeded, 2);
  EXPECT_LE(runs.size(), 3u);

  // The cron job itself never runs; job get shows its schedule and next tick.
  Json got = c.CliJson({"job", "get", std::to_string(cron)});
  EXPECT_EQ(got["job"]["state"], "PENDING") << got.dump();
  EXPECT_EQ(got["job"]["task_counts"].value("PENDING", 0), 1) << got.dump();
  EXPECT_THAT(got.value("pending_reason", ""), HasSubstr("a cron job"));
  EXPECT_THAT(got.value("pending_reason", ""), HasSubstr("next tick"));
  RunResult table = c.Cli({"job", "get", std::to_string(cron)});
  EXPECT_THAT(table.out, HasSubstr("schedule: \"*/2 * * * * *\" in UTC, concurrency forbid"));
  RunResult list = c.Cli({"job", "runs", std::to_string(cron)});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("RUN"));
  EXPECT_THAT(list.out, HasSubstr(runs[0].name));
}

TEST(CronE2E, ReplaceKillsTheLiveRun) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  ASSERT_TRUE(c.WaitForHosts(1));
  const uint64_t cron = c.CreateJob(
      "/e2e", CronJob("long", "sleep 100",
                      "{cron: \"*/3 * * * * *\", concurrency: replace, keep_failed: 5}"));
  ASSERT_GT(cron, 0u);
  ASSERT_TRUE(WaitForRuns(
      c, std::to_string(cron),
      [](const std::vector<CronRun>& runs) {
        int killed = 0;
        for (const CronRun& r : runs) killed += r.state == "KILLED";
        return killed >= 2;
      },
      absl::Seconds(60)));
  std::vector<CronRun> runs = Runs(c, std::to_string(cron));
  int live = 0;
  for (const CronRun& r : runs) live += r.state == "RUNNING" || r.state == "PENDING";
  EXPECT_LE(live, 1) << "replace left two runs live";
  // Each killed run was killed by its successor's tick: it ended after the next tick.
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    if (runs[i + 1].state != "KILLED") continue;
    EXPECT_GE(runs[i + 1].finished_ms, runs[i].tick_ms);
  }
}

TEST(CronE2E, AMasterKilledAtATickRunsEachTickOnce) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  ASSERT_TRUE(c.WaitForHosts(1));
  const uint64_t cron = c.CreateJob(
      "/e2e", CronJob("tick", "true", "{cron: \"*/2 * * * * *\", keep_succeeded: 100}"));
  ASSERT_GT(cron, 0u);
  ASSERT_TRUE(WaitForRuns(
      c, "tick", [](const std::vector<CronRun>& r) { return r.size() >= 1; }, absl::Seconds(30)));
  std::vector<std::pair<absl::Time, absl::Time>> outages;  // (killed, serving again)
  for (int kill = 0; kill < 3; ++kill) {
    // SIGKILL a few milliseconds after an even second, while the tick's run is being made.
    absl::Time now = absl::Now();
    absl::Time tick = absl::FromUnixSeconds((absl::ToUnixSeconds(now) / 2 + 1) * 2);
    absl::SleepFor(tick - now + absl::Milliseconds(5 + 20 * kill));
    c.master().Signal(SIGKILL);
    absl::Time killed = absl::Now();
    ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
    c.StartMaster();
    ASSERT_TRUE(c.WaitForHosts(1, absl::Seconds(60)));
    outages.push_back({killed, absl::Now()});
    absl::SleepFor(absl::Seconds(3));  // a tick or two on the new master
  }
  std::vector<CronRun> runs = Runs(c, "tick");
  ASSERT_GE(runs.size(), 4u);
  std::set<int64_t> ticks;
  std::set<std::string> names;
  for (const CronRun& r : runs) {
    EXPECT_TRUE(ticks.insert(r.tick_ms).second) << "tick " << r.tick_ms << " ran twice";
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
  }
  // The ticks of each outage: at most one run, for the latest of them.
  for (const auto& [down, up] : outages) {
    int in_outage = 0;
    for (const CronRun& r : runs) {
      absl::Time t = absl::FromUnixMillis(r.tick_ms);
      in_outage += t > down + absl::Milliseconds(100) && t < up - absl::Seconds(2);
    }
    EXPECT_LE(in_outage, 1) << "more than one late run for one outage";
  }
  // The cron job still never ran itself.
  Json got = c.CliJson({"job", "get", std::to_string(cron)});
  EXPECT_EQ(got["job"]["state"], "PENDING") << got.dump();
}

TEST(CronE2E, BadSchedulesAreRefusedAtTheirValueAndSuspendStopsTheRuns) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  RunResult bad = c.Cli({"job", "create", "--pool", "/e2e", "-f",
                         c.WriteFile("bad.yaml", CronJob("x", "true", "{cron: \"61 * * * *\"}"))});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("bad.yaml:8:18: schedule.cron: minute: '61' is out of range; "
                                 "expected 0-59"));
  RunResult zone =
      c.Cli({"job", "create", "--pool", "/e2e", "-f",
             c.WriteFile("zone.yaml",
                         CronJob("x", "true", "{cron: \"@daily\", time_zone: Mars/Olympus}"))});
  EXPECT_NE(zone.exit_code, 0);
  EXPECT_THAT(zone.err, HasSubstr("zone.yaml:8:39: schedule.time_zone: unknown time zone "
                                  "'Mars/Olympus'"));
  RunResult service = c.Cli(
      {"job", "create", "--pool", "/e2e", "-f",
       c.WriteFile("svc.yaml",
                   CronJob("y", "true", "{cron: \"@daily\"}").replace(8, 11, "type: service"))});
  EXPECT_NE(service.exit_code, 0);
  EXPECT_THAT(service.err, HasSubstr("only batch jobs run on a schedule"));
  EXPECT_THAT(c.CliJson({"job", "list"}).dump(), ::testing::Not(HasSubstr("\"x\"")));

  ASSERT_TRUE(c.WaitForHosts(1));
  const std::string spec = CronJob("beat", "true", "{cron: \"*/2 * * * * *\", suspend: true}");
  const uint64_t cron = c.CreateJob("/e2e", spec);
  ASSERT_GT(cron, 0u);
  absl::SleepFor(absl::Seconds(5));
  EXPECT_TRUE(Runs(c, "beat").empty());
  EXPECT_THAT(c.CliJson({"job", "get", std::to_string(cron)}).value("pending_reason", ""),
              HasSubstr("suspended"));
  // Resumed by an update of the template.
  std::string resumed = spec;
  resumed.replace(resumed.find("suspend: true"), 13, "suspend: false");
  RunResult up =
      c.Cli({"job", "update", std::to_string(cron), "-f", c.WriteFile("resumed.yaml", resumed)});
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  EXPECT_TRUE(WaitForRuns(
      c, "beat", [](const std::vector<CronRun>& r) { return r.size() >= 2; }, absl::Seconds(30)));
}

}  // namespace
}  // namespace paceline::e2e
