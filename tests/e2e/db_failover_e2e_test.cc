// Masters on PostgreSQL replicated by Patroni over etcd (scripts/patroni-up.sh): they ride
// through the loss of an etcd member and a killed primary, and a leader cut off from the
// database is fenced while a standby takes over; nothing acknowledged is lost and nothing runs
// twice.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/network_cut.h"
#include "tests/e2e/patroni_bed.h"
#include "tests/e2e/postgres_util.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;
using ::testing::AnyOf;
using ::testing::HasSubstr;

// What runs through a failover: a service of sleepers that must never be touched, and a batch
// job between run markers whose every instance must run exactly once.
struct Workload {
  uint64_t service = 0;
  uint64_t batch = 0;
  int instances = 0;
  std::string markers;

  // Creates the pool and both jobs; returns once the sleepers run and a tenth of the batch
  // succeeded.
  static Workload Start(TestCluster& c, int sleepers, int instances) {
    Workload w{.instances = instances, .markers = MakeMarkersDir(c.dir())};
    EXPECT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
              0);
    w.service = c.CreateJob("/e2e", absl::StrCat("name: sleepers\ninstances: ", sleepers, R"(
task:
  command: "sleep 600"
  resources: {cpu: 0.05, memory: 8Mi}
)"));
    w.batch = c.CreateJob("/e2e", MarkedJob("steady", instances, w.markers, "sleep 1"));
    EXPECT_TRUE(c.WaitForJob(
        w.service, [&](const Json& j) { return TasksIn(j, "RUNNING") == uint32_t(sleepers); },
        absl::Seconds(60)));
    EXPECT_TRUE(c.WaitForJob(
        w.batch, [&](const Json& j) { return TasksIn(j, "SUCCEEDED") >= uint32_t(instances / 10); },
        absl::Seconds(120)));
    return w;
  }

  // Waits for the batch, then checks that each instance ran exactly once (a success
  // acknowledged before the failover and lost would have run again) and that the sleepers
  // still run their first run.
  void ExpectExactlyOnceAndUntouched(TestCluster& c) const {
    RunResult wait = c.Cli({"job", "wait", std::to_string(batch), "--timeout", "240s"});
    ASSERT_EQ(wait.exit_code, 0) << wait.err;
    Json tasks = c.CliJson({"task", "list", std::to_string(batch)});
    ASSERT_EQ(tasks["tasks"].size(), static_cast<size_t>(instances));
    for (const Json& t : tasks["tasks"]) {
      const int i = t.value("instance", 0);
      EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
      EXPECT_EQ(MarkedRuns(markers, i).size(), 1u) << "instance " << i << " ran more than once";
    }
    ExpectRunsNeverOverlap(markers, instances);
    for (const Json& t : c.CliJson({"task", "list", std::to_string(service)})["tasks"]) {
      EXPECT_EQ(t["state"], "RUNNING") << t.dump();
      EXPECT_EQ(t["run"], 1) << t.dump();
    }
  }
};

constexpr char kLate[] = R"(
name: late
instances: 1
task: {command: "true", resources: {cpu: 0.05, memory: 8Mi}}
)";

// Three masters and two agents on a primary and its synchronous standby. One of the three etcd
// members is killed, then the primary's postmaster (kill -9) while a batch job runs: Patroni
// promotes the standby (or starts the old primary again when it finds none to fail over to),
// a master leads on it, and writes are accepted again. Meanwhile a write
// is refused with a clear error. Every batch instance ran exactly once and the service's tasks
// are still on their first run.
TEST(DbFailoverE2E, MastersRideAKilledPrimaryAndALostEtcdMember) {
  auto bed = PatroniBed::Start(MakeTempDir("patroni"));
  ASSERT_TRUE(bed.ok()) << bed.status();
  const int old_primary = (*bed)->Primary();
  ASSERT_GE(old_primary, 0) << (*bed)->LogTails();
  TestCluster c({.agents = 2, .store = (*bed)->store(), .masters = 3});
  Workload work = Workload::Start(c, 10, 200);
  ASSERT_FALSE(::testing::Test::HasFailure());

  // etcd keeps its quorum with two members of three.
  ASSERT_EQ(::kill((*bed)->etcd_pid(0), SIGKILL), 0);
  const pid_t postmaster = (*bed)->PostmasterPid(old_primary);
  ASSERT_GT(postmaster, 0);
  ASSERT_EQ(::kill(postmaster, SIGKILL), 0);
  absl::Time killed = absl::Now();

  // No server takes writes yet: refused, saying why (or, in flight, that it may not be made).
  RunResult during =
      c.Cli({"job", "create", "-f", c.WriteFile("late.yaml", kLate), "--pool", "/e2e"});
  std::cout << "a write during the failover: exit " << during.exit_code << " " << during.err
            << std::endl;
  if (during.exit_code != 0) {
    EXPECT_THAT(during.err, AnyOf(HasSubstr("store is unavailable"), HasSubstr("does not lead")))
        << during.err;
  }
  // Patroni promotes the standby — or, when it finds no standby it may fail over to at that
  // moment, starts the old primary again in place; a master leads on the primary (perhaps
  // another one: the leader steps down when it cannot renew its lease) and accepts writes
  // again. A write may also be accepted just after the kill: the old primary's backend has
  // not yet noticed its postmaster is gone. Then the failover is still to come, and that
  // write must survive it (the job is waited for below): wait for a new primary, or for the
  // old one's new postmaster.
  RunResult created = during;
  auto failed_over = [&] {
    const int p = (*bed)->Primary();
    if (p < 0) return false;
    if (p != old_primary) return true;
    const pid_t pid = (*bed)->PostmasterPid(old_primary);
    return pid > 0 && pid != postmaster;
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        if (!failed_over()) return false;
        if (created.exit_code == 0) return true;
        if (c.FindLeader(absl::Seconds(1)) < 0) return false;
        created = c.Cli({"job", "create", "-f", c.dir() + "/late.yaml", "--pool", "/e2e"});
        return created.exit_code == 0;
      },
      absl::Seconds(90)))
      << created.err << (*bed)->LogTails();
  std::cout << "database failover: writes accepted again "
            << absl::FormatDuration(absl::Now() - killed) << " after the primary was killed"
            << std::endl;
  std::cout << ((*bed)->Primary() != old_primary
                    ? "Patroni promoted the standby"
                    : "Patroni started the old primary again in place (no standby to fail over to)")
            << std::endl;

  RunResult late = c.Cli(
      {"job", "wait", std::string(absl::StripAsciiWhitespace(created.out)), "--timeout", "120s"});
  EXPECT_EQ(late.exit_code, 0) << late.err;
  work.ExpectExactlyOnceAndUntouched(c);
}

// Two masters: the leader reaches the database through 127.0.0.2, the standby through
// 127.0.0.1. The leader's path is cut (packets dropped, so its connections go silent rather
// than fail): it stops leading, the standby takes over under a new term once the lease ran out,
// the agent moves there, and the old leader refuses writes. When the path heals the old leader
// follows as a standby. The batch runs each instance exactly once; the service is untouched.
TEST(DbFailoverE2E, ALeaderCutOffFromTheDatabaseIsFencedAndTheStandbyLeads) {
  auto bed = PatroniBed::Start(MakeTempDir("patroni"), {.addresses = "127.0.0.1,127.0.0.2"});
  ASSERT_TRUE(bed.ok()) << bed.status();
  const std::string cut_store =
      absl::StrReplaceAll((*bed)->store(), {{"127.0.0.1:", "127.0.0.2:"}});
  TestCluster c({.agents = 1,
                 .store = (*bed)->store(),
                 .master_store = {{0, cut_store}},
                 .masters = 2,
                 .lease = ""});
  ASSERT_EQ(c.FindLeader(absl::Seconds(30)), 0);
  Workload work = Workload::Start(c, 4, 100);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const uint64_t term = JsonInt(c.CliJson({"info"})["term"]);

  NetworkCut cut("127.0.0.2");
  absl::Time cut_at = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return c.FindLeader(absl::Seconds(1)) == 1; }, absl::Seconds(30)))
      << c.master(0).Output();
  std::cout << "the standby leads " << absl::FormatDuration(absl::Now() - cut_at)
            << " after the leader was cut off from the database" << std::endl;
  EXPECT_GT(JsonInt(c.CliJson({"info"})["term"]), term);
  RunResult refused = RunPaceline({"--addr", c.master_address(0), "--token", c.token(), "--timeout",
                                   "3s", "pool", "create", "/cut", "-f", c.dir() + "/pool.yaml"});
  EXPECT_NE(refused.exit_code, 0) << refused.out;
  // The cut-off leader steps down once it cannot renew its lease, which may come after the
  // standby leads (its lease ran out first).
  EXPECT_TRUE(
      WaitFor([&] { return absl::StrContains(c.master(0).Output(), "stepping down from term"); },
              absl::Seconds(20)))
      << c.master(0).Output();
  cut.Heal();
  EXPECT_TRUE(WaitFor(
      [&] {
        RunResult r = RunPaceline(
            {"--addr", c.master_address(0), "--token", c.token(), "info", "-o", "json"});
        Json j = Json::parse(r.out, nullptr, false);
        return !j.is_discarded() && j["role"] == "standby" && j["leader"] == c.master_address(1);
      },
      absl::Seconds(30)));
  work.ExpectExactlyOnceAndUntouched(c);
}

}  // namespace
}  // namespace paceline::e2e
