// Retention and archive on a real master: finished jobs leave the live store for the archive
// after their pool's window, stay readable (`job get --archived`, `history query`), survive a
// restart, are never lost when the master is killed in the middle, and stay in the store while
// the archive cannot be written.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kPool = R"(resources:
  cpu: {reservation: 1, limit: 2}
  memory: {reservation: 1Gi, limit: 2Gi}
)";
constexpr const char* kKeptPool = R"(resources:
  cpu: {reservation: 0.5, limit: 2}
  memory: {reservation: 512Mi, limit: 2Gi}
retain_terminal: forever
)";

std::string Job(const std::string& name, int instances, int exit_code = 0) {
  return absl::StrCat("name: ", name, "\ninstances: ", instances, "\ntask:\n  command: \"exit ",
                      exit_code, "\"\n  resources: {cpu: 0.1, memory: 16Mi}\n");
}

// What `command` prints on stdout.
std::string Shell(const std::string& command) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  ::pclose(f);
  return out;
}

ClusterOptions Options(std::vector<std::string> more = {}) {
  ClusterOptions o;
  o.agents = 1;
  o.master_args = {"--retain-terminal", "2s", "--retention-period", "200ms"};
  o.master_args.insert(o.master_args.end(), more.begin(), more.end());
  return o;
}

class RetentionE2E : public ::testing::Test {
 protected:
  explicit RetentionE2E(ClusterOptions o = Options()) : c_(std::move(o)) {}

  void SetUp() override {
    ASSERT_TRUE(c_.WaitForHosts(1));
    for (const auto& [path, spec] : {std::pair{"/a", kPool}, std::pair{"/keep", kKeptPool}}) {
      RunResult r = c_.Cli({"pool", "create", path, "-f", c_.WriteFile("pool.yaml", spec)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  // Whether the job ended (it may have been retired already, two seconds after).
  bool Ended(uint64_t job) {
    return WaitFor(
        [&] {
          RunResult r = c_.Cli({"job", "get", std::to_string(job), "-o", "json"});
          if (r.exit_code != 0) return r.err.find("--archived") != std::string::npos;
          const std::string state = Json::parse(r.out)["job"]["state"];
          return state == "SUCCEEDED" || state == "FAILED";
        },
        absl::Seconds(60));
  }
  // Whether the live store no longer has the job.
  bool Retired(uint64_t job) {
    RunResult r = c_.Cli({"job", "get", std::to_string(job)});
    return r.exit_code != 0 && r.err.find("--archived") != std::string::npos;
  }
  bool WaitRetired(uint64_t job, absl::Duration timeout = absl::Seconds(30)) {
    return WaitFor([&] { return Retired(job); }, timeout);
  }
  Json Archived(uint64_t job) {
    return c_.CliJson({"job", "get", "--archived", std::to_string(job)});
  }
  double Metric(const std::string& name) {
    std::string text = c_.HttpGet("/metrics");
    size_t at = text.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + name.size() + 2));
  }

  TestCluster c_;
};

TEST_F(RetentionE2E, FinishedJobsMoveToTheArchiveAndStayReadableAcrossARestart) {
  uint64_t done = c_.CreateJob("/a", Job("done", 2));
  uint64_t failed = c_.CreateJob("/a", Job("failed", 1, 3));
  uint64_t kept = c_.CreateJob("/keep", Job("kept", 1));
  ASSERT_TRUE(Ended(done) && Ended(failed) && Ended(kept));
  ASSERT_TRUE(WaitRetired(done)) << c_.Cli({"job", "get", std::to_string(done)}).out;
  ASSERT_TRUE(WaitRetired(failed));

  Json j = Archived(done);
  EXPECT_EQ(j["job_id"], done);
  EXPECT_EQ(j["pool"], "/a");
  EXPECT_EQ(j["state"], "SUCCEEDED");
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][1]["exit_code"], 0);
  EXPECT_GE(j["events"].size(), 6u) << "each run's PLACED ... SUCCEEDED";
  EXPECT_EQ(Archived(failed)["tasks"][0]["exit_code"], 3);
  RunResult table = c_.Cli({"job", "get", "--archived", std::to_string(failed)});
  EXPECT_THAT(table.out, HasSubstr("EXIT_NONZERO"));

  Json history = c_.CliJson({"history", "query", "--since", "1h", "--pool", "/a"});
  std::set<uint64_t> ids;
  for (const Json& h : history["jobs"]) ids.insert(h["job_id"].get<uint64_t>());
  EXPECT_EQ(ids, (std::set<uint64_t>{done, failed}));
  EXPECT_EQ(c_.CliJson({"history", "query", "--until", "1h"})["jobs"].size(), 0u)
      << "nothing finished more than an hour ago";
  RunResult bad = c_.Cli({"history", "query", "--since", "yesterday"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("--since: 'yesterday' is neither a duration"));

  // A viewer of /keep only is shown none of /a's archived jobs.
  const std::string viewer = c_.CliJson(
      {"token", "create", "--user", "kv", "--role", "viewer", "--pool", "/keep"})["token"];
  auto as_viewer = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--addr", c_.master_address(0), "--token", viewer});
    return RunPaceline(args, c_.dir());
  };
  RunResult seen = as_viewer({"history", "query", "-o", "json"});
  ASSERT_EQ(seen.exit_code, 0) << seen.err;
  EXPECT_EQ(Json::parse(seen.out)["jobs"].size(), 0u) << seen.out;
  RunResult hidden = as_viewer({"job", "get", "--archived", std::to_string(done)});
  EXPECT_NE(hidden.exit_code, 0);
  EXPECT_THAT(hidden.err, HasSubstr("is not in the archive"));

  // A pool that keeps its jobs forever keeps them.
  EXPECT_FALSE(Retired(kept));
  EXPECT_GE(Metric("paceline_archive_jobs_total"), 2);
  EXPECT_EQ(Metric("paceline_archive_failures_total"), 0);
  EXPECT_GE(Metric("paceline_retention_finished_jobs"), 1) << "the kept job";

  // The archive is plain gzip'd JSON lines.
  std::string day = c_.dir() + "/master/archive";
  ASSERT_TRUE(std::filesystem::exists(day));
  EXPECT_EQ(Shell(absl::StrCat("zcat ", day, "/*.jsonl.gz | wc -l")), "2\n");

  c_.master().Signal(SIGKILL);
  ASSERT_TRUE(c_.master().WaitExit(absl::Seconds(10)).has_value());
  c_.StartMaster();
  ASSERT_TRUE(c_.WaitForHosts(1));
  EXPECT_TRUE(Retired(done)) << "a retired job does not come back";
  EXPECT_EQ(Archived(done)["state"], "SUCCEEDED");
  EXPECT_FALSE(Retired(kept));
}

TEST_F(RetentionE2E, AMasterKilledWhileRetiringLosesNoJobAndShowsNoneTwice) {
  std::vector<uint64_t> jobs;
  for (int i = 0; i < 24; ++i) jobs.push_back(c_.CreateJob("/a", Job(absl::StrCat("j", i), 1)));
  for (uint64_t j : jobs) ASSERT_TRUE(Ended(j));
  // Kill it as soon as the first jobs reach the archive: others are being retired.
  ASSERT_TRUE(WaitFor([&] { return Retired(jobs.front()); }, absl::Seconds(30)));
  c_.master().Signal(SIGKILL);
  ASSERT_TRUE(c_.master().WaitExit(absl::Seconds(10)).has_value());
  c_.StartMaster();
  for (uint64_t j : jobs) ASSERT_TRUE(WaitRetired(j)) << "job " << j;
  Json history = c_.CliJson({"history", "query", "--pool", "/a", "--limit", "1000"});
  std::multiset<uint64_t> seen;
  for (const Json& h : history["jobs"]) seen.insert(h["job_id"].get<uint64_t>());
  EXPECT_EQ(seen, std::multiset<uint64_t>(jobs.begin(), jobs.end()));
  for (uint64_t j : jobs) EXPECT_EQ(Archived(j)["state"], "SUCCEEDED") << j;
}

// Today's and tomorrow's archive files are on a device that is always full (UTC days).
std::string FullArchiveDir(const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (absl::Time t : {absl::Now(), absl::Now() + absl::Hours(24)}) {
    std::string day = absl::FormatTime("%Y-%m-%d", t, absl::UTCTimeZone());
    std::filesystem::create_symlink("/dev/full", absl::StrCat(dir, "/", day, ".jsonl.gz"));
  }
  return dir;
}

class FullArchiveE2E : public RetentionE2E {
 protected:
  FullArchiveE2E()
      : RetentionE2E(Options(
            {"--archive-dir",
             FullArchiveDir(absl::StrCat(::testing::TempDir(), "/full-archive-", ::getpid()))})),
        archive_(absl::StrCat(::testing::TempDir(), "/full-archive-", ::getpid())) {}
  ~FullArchiveE2E() override { std::filesystem::remove_all(archive_); }
  std::string archive_;
};

TEST_F(FullArchiveE2E, JobsStayInTheStoreWhileTheArchiveCannotBeWrittenThenMove) {
  uint64_t job = c_.CreateJob("/a", Job("waits", 1));
  ASSERT_TRUE(Ended(job));
  ASSERT_TRUE(
      WaitFor([&] { return Metric("paceline_archive_failures_total") >= 2; }, absl::Seconds(20)));
  EXPECT_FALSE(Retired(job)) << "not archived: still in the live store";
  EXPECT_GT(Metric("paceline_archive_lag_seconds"), 0);
  for (const auto& e : std::filesystem::directory_iterator(archive_)) {
    if (e.is_symlink()) std::filesystem::remove(e.path());
  }
  ASSERT_TRUE(WaitRetired(job));
  EXPECT_EQ(Archived(job)["state"], "SUCCEEDED");
}

}  // namespace
}  // namespace paceline::e2e
