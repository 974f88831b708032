// End to end: gangs that restart together (job.gang.restart: gang) and jobs that complete with
// instance 0 (completion: instance-0), on a real master and four real agents running real
// processes. A rank that fails stops every other member; the gang runs again, all members
// together, in its next attempt (PACELINE_GANG_ATTEMPT), each member's events saying why; past
// max_restarts the job fails; a gang preempted for a job of higher priority runs again once there
// is room; a member whose agent dies restarts the gang on the other hosts; a master killed with
// SIGKILL in the middle of a gang restart finishes it after its restart. Also
// measured: the time from a rank's death to its whole gang running again
// (bench/results/gang-restart-*.md).

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
description: gangs
resources:
  cpu:    {reservation: 8, limit: 8}
  memory: {reservation: 1Gi}
)";

const absl::Duration kJobTimeout = absl::Seconds(kSanitized ? 300 : 120);

// A gang of four, one member per agent (1.5 of each agent's 2 cores). Every run appends
// "start RUN NANOS" to MARKERS/<instance> and "stop RUN NANOS" as it ends (the run markers of
// cluster_fixture.h), and prints its gang attempt. Runs up to `last_failing` fail: `rank` waits
// until the other members of its run have started, appends "fail RUN NANOS" to MARKERS/fail and
// exits 1; the others wait to be stopped (`stop_s` seconds to stop after SIGTERM). Later runs
// succeed after a second. Each member asks `cpu` cores.
std::string GangSpec(const std::string& markers, int rank, int last_failing, int max_restarts,
                     int stop_s = 0, const std::string& cpu = "1.5") {
  return absl::StrReplaceAll(R"yaml(
name: ranks
instances: 4
sla: {min_running_instances: 4}
gang: {restart: gang, max_restarts: @MAX@}
task:
  resources: {cpu: @CPU@, memory: 32Mi}
  kill_grace: 20s
  env: {MARKERS: "@MARKERS@"}
  command: |
    run=${PACELINE_RUN_ID##*/}
    mark() { echo "$1 $run $(date +%s%N)" >> $MARKERS/$2; }
    mark start $PACELINE_INSTANCE_ID
    echo "attempt $PACELINE_GANG_ATTEMPT run $run"
    if [ "$run" -gt @LAST@ ]; then sleep 1; mark stop $PACELINE_INSTANCE_ID; exit 0; fi
    if [ "$PACELINE_INSTANCE_ID" = @RANK@ ]; then
      until [ "$(cat $MARKERS/[0-9] 2>/dev/null | grep -c "^start $run ")" -ge 4 ]; do
        sleep 0.05
      done
      mark fail fail
      mark stop $PACELINE_INSTANCE_ID
      exit 1
    fi
    trap 'sleep @STOP@; mark stop $PACELINE_INSTANCE_ID; exit 0' TERM
    sleep 600 & wait
)yaml",
                             {{"@MAX@", absl::StrCat(max_restarts)},
                              {"@MARKERS@", markers},
                              {"@LAST@", absl::StrCat(last_failing)},
                              {"@RANK@", absl::StrCat(rank)},
                              {"@STOP@", absl::StrCat(stop_s)},
                              {"@CPU@", cpu}});
}

bool WaitFor(const std::function<bool()>& pred, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return pred();
}

// "KEY RUN NANOS" lines of a markers file: run -> nanos, for lines of `key`.
std::map<int, int64_t> Marks(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::map<int, int64_t> out;
  std::string what;
  int run = 0;
  int64_t at = 0;
  while (in >> what >> run >> at) {
    if (what == key) out[run] = at;
  }
  return out;
}

class GangRestartE2E : public ::testing::Test {
 protected:
  GangRestartE2E() : c_({.agents = 4}) {}
  void SetUp() override {
    RunResult r = c_.Cli({"pool", "create", "/gangs", "-f", c_.WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(c_.WaitForHosts(4));
    markers_ = MakeMarkersDir(c_.dir());
  }
  std::string State(uint64_t job) {
    return c_.CliJson({"job", "get", std::to_string(job)})["job"]["state"];
  }
  bool WaitForState(uint64_t job, const std::string& state) {
    return c_.WaitForJob(
        job, [&](const Json& j) { return j["state"] == state; }, kJobTimeout);
  }
  Json Events(uint64_t job, uint32_t instance) {
    return c_.CliJson({"task", "events", absl::StrCat(job, "/", instance)})["events"];
  }
  // Every member's events: each of its first runs' end, and its next run's PENDING event, say
  // `why`.
  void ExpectEveryMemberSays(uint64_t job, const std::string& why, uint32_t runs) {
    for (uint32_t i = 0; i < 4; ++i) {
      Json events = Events(job, i);
      std::set<uint32_t> said;
      for (const Json& e : events) {
        if (std::string(e["message"]).find(why) != std::string::npos)
          said.insert(e["run"].get<uint32_t>());
      }
      for (uint32_t run = 1; run <= runs; ++run) {
        EXPECT_TRUE(said.contains(run)) << "instance " << i << " run " << run << ": " << events;
      }
    }
  }

  TestCluster c_;
  std::string markers_;
};

TEST_F(GangRestartE2E, AFailedRankRestartsTheWholeGangTogetherAndTheJobSucceeds) {
  uint64_t job = c_.CreateJob("/gangs", GangSpec(markers_, 2, 1, 2));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitForState(job, "SUCCEEDED")) << c_.Cli({"task", "list", std::to_string(job)}).out;

  Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
  ASSERT_EQ(tasks["tasks"].size(), 4u);
  std::set<std::string> hosts;
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t;
    EXPECT_EQ(t["run"], 2) << "every member ran again, once: " << t;
    hosts.insert(t["host"]);
    // The new run knew its new attempt (a new rendezvous).
    RunResult logs = c_.Cli({"task", "logs", absl::StrCat(job, "/", t["instance"].get<int>())});
    EXPECT_EQ(logs.out, "attempt 1 run 2\n") << logs.err;
  }
  EXPECT_EQ(hosts.size(), 4u);
  const std::string why = "gang restart 1/2: instance 2 failed: exit 1";
  ExpectEveryMemberSays(job, why, 2);
  // What a user sees: each run's gang attempt (the API, `task list`, `task get`) and the gang.
  for (const Json& t : tasks["tasks"]) EXPECT_EQ(t.value("gang_attempt", 0), 1) << t;
  RunResult list = c_.Cli({"task", "list", std::to_string(job)});
  EXPECT_THAT(list.out, ::testing::ContainsRegex("^TASK +RUN +ATTEMPT +STATE ")) << list.out;
  EXPECT_THAT(list.out, ::testing::ContainsRegex(absl::StrCat(job, "/3 +2 +1 +SUCCEEDED")))
      << list.out;
  EXPECT_THAT(c_.Cli({"task", "get", absl::StrCat(job, "/0")}).out,
              HasSubstr("\ngang attempt: 1 (its gang restarted together)\n"));
  EXPECT_THAT(c_.Cli({"job", "get", std::to_string(job)}).out,
              HasSubstr("\ngang: 4 instances together, rendezvous none, restart gang (at most 2 "
                        "gang restarts)\n"));
  for (uint32_t i : {0u, 1u, 3u}) {
    bool stopped = false;
    for (const Json& e : Events(job, i)) {
      stopped |= e["run"] == 1 && e["state"] == "KILLED" && e["reason"] == "GANG_RESTART";
    }
    EXPECT_TRUE(stopped) << "instance " << i << ": " << Events(job, i);
  }
  // Together: no member's second run started before every first run had stopped, and no
  // instance ever ran twice at once.
  ExpectRunsNeverOverlap(markers_, 4);
  const int64_t failed_at = Marks(markers_ + "/fail", "fail").at(1);
  for (int i = 0; i < 4; ++i) {
    EXPECT_GT(Marks(absl::StrCat(markers_, "/", i), "start").at(2), failed_at) << i;
  }
}

TEST_F(GangRestartE2E, PastMaxRestartsTheJobFailsAndEveryMemberSaysWhy) {
  uint64_t job = c_.CreateJob("/gangs", GangSpec(markers_, 1, 99, 1));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitForState(job, "FAILED")) << c_.Cli({"task", "list", std::to_string(job)}).out;
  Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["run"], 2) << "one gang restart, then no more: " << t;
    EXPECT_EQ(t["state"], t["instance"] == 1 ? "FAILED" : "KILLED") << t;
    if (t["instance"] != 1) {
      EXPECT_EQ(t["reason"], "GANG_FAILED") << t;
    }
  }
  const std::string why = "no gang restarts left (1 of 1 used): instance 1 failed: exit 1";
  for (uint32_t i = 0; i < 4; ++i) {
    Json events = Events(job, i);
    ASSERT_FALSE(events.empty());
    EXPECT_THAT(std::string(events.back()["message"]), HasSubstr(why)) << i << ": " << events;
  }
  ExpectEveryMemberSays(job, "gang restart 1/1: instance 1 failed: exit 1", 2);
}

TEST_F(GangRestartE2E, AMasterKilledDuringAGangRestartFinishesItAfterItsRestart) {
  // The members take a few seconds to stop: the master dies while they do.
  uint64_t job =
      c_.CreateJob("/gangs", GangSpec(markers_, 2, 1, 2, /*stop_s=*/kSanitized ? 10 : 4));
  ASSERT_GT(job, 0u);
  Json at_failure;
  ASSERT_TRUE(WaitFor(
      [&] {
        at_failure = c_.CliJson({"task", "list", std::to_string(job)})["tasks"];
        for (const Json& t : at_failure) {
          if (t["instance"] == 2 && t["state"] == "FAILED") return true;
        }
        return false;
      },
      kJobTimeout));
  for (const Json& t : at_failure) {
    if (t["instance"] != 2) {
      EXPECT_EQ(t["state"], "KILLING") << "a gang restart in progress: " << at_failure;
      EXPECT_EQ(t["reason"], "GANG_RESTART") << at_failure;
    }
  }
  c_.master().Signal(SIGKILL);
  ASSERT_TRUE(c_.master().WaitExit(absl::Seconds(10)).has_value());
  c_.StartMaster();
  ASSERT_TRUE(c_.WaitForHosts(4, absl::Seconds(60)));
  ASSERT_TRUE(WaitForState(job, "SUCCEEDED")) << c_.Cli({"task", "list", std::to_string(job)}).out;
  Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["run"], 2) << t;
    RunResult logs = c_.Cli({"task", "logs", absl::StrCat(job, "/", t["instance"].get<int>())});
    EXPECT_EQ(logs.out, "attempt 1 run 2\n") << logs.err;
  }
  ExpectEveryMemberSays(job, "gang restart 1/2: instance 2 failed: exit 1", 2);
  ExpectRunsNeverOverlap(markers_, 4);
}

// A pool of 4 cores held by a gang of four (one core each) when a job of higher priority asks
// one core: the resource manager preempts the gang (a victim as a whole), every member's events
// say so, the urgent job runs, and the gang runs again, together, only once the urgent job has
// given its core back; the job still succeeds, each member in its new attempt.
TEST_F(GangRestartE2E, APreemptedMemberRestartsTheGangWhichRunsAgainOnceThereIsRoom) {
  ASSERT_EQ(c_.Cli({"pool", "create", "/tight", "-f", c_.WriteFile("tight.yaml", R"(
description: room for one gang of four
resources:
  cpu:    {reservation: 4, limit: 4}
  memory: {reservation: 1Gi}
)")})
                .exit_code,
            0);
  uint64_t job = c_.CreateJob("/tight", GangSpec(markers_, /*rank=*/-1, 1, 2, 0, "1"));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitFor(
      [&] {
        Json tasks = c_.CliJson({"task", "list", std::to_string(job)})["tasks"];
        return std::count_if(tasks.begin(), tasks.end(),
                             [](const Json& t) { return t["state"] == "RUNNING"; }) == 4;
      },
      kJobTimeout))
      << c_.Cli({"task", "list", std::to_string(job)}).out;
  uint64_t urgent = c_.CreateJob("/tight", absl::StrReplaceAll(R"yaml(
name: urgent
instances: 1
priority: 100
task:
  resources: {cpu: 1, memory: 32Mi}
  env: {MARKERS: "@MARKERS@"}
  command: |
    echo "start 1 $(date +%s%N)" >> $MARKERS/urgent
    sleep 2
    echo "stop 1 $(date +%s%N)" >> $MARKERS/urgent
)yaml",
                                                               {{"@MARKERS@", markers_}}));
  ASSERT_GT(urgent, 0u);
  ASSERT_TRUE(WaitForState(urgent, "SUCCEEDED"))
      << c_.Cli({"task", "list", std::to_string(urgent)}).out;
  ASSERT_TRUE(WaitForState(job, "SUCCEEDED")) << c_.Cli({"task", "list", std::to_string(job)}).out;

  Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
  ASSERT_EQ(tasks["tasks"].size(), 4u);
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t;
    EXPECT_EQ(t["run"], 2) << "every member ran again, once: " << t;
    RunResult logs = c_.Cli({"task", "logs", absl::StrCat(job, "/", t["instance"].get<int>())});
    EXPECT_EQ(logs.out, "attempt 1 run 2\n") << logs.err;
  }
  // The member whose end came first is the one the gang restart names, with the resource
  // manager's reason; the others were stopped for the gang, and every member says why.
  int preempted = -1;
  for (uint32_t i = 0; i < 4; ++i) {
    for (const Json& e : Events(job, i)) {
      if (e["run"] != 1 || e["state"] != "KILLED") continue;
      if (e["reason"] == "PREEMPTED") {
        EXPECT_EQ(preempted, -1) << "one member's end restarts the gang";
        preempted = static_cast<int>(i);
        EXPECT_THAT(std::string(e["message"]), HasSubstr("preempted for gang ")) << e;
        EXPECT_THAT(std::string(e["message"]),
                    HasSubstr(absl::StrCat("(job ", urgent, ", priority 100")))
            << e;
      } else {
        EXPECT_EQ(e["reason"], "GANG_RESTART") << "instance " << i << ": " << e;
      }
    }
  }
  ASSERT_GE(preempted, 0) << Events(job, 0);
  ExpectEveryMemberSays(
      job, absl::StrCat("gang restart (not counted): instance ", preempted, " was preempted"), 2);
  // The gang ran again only once the urgent job had given its core back (the pool has room
  // for the gang, or for the urgent job and three members), never a member twice at once.
  const std::map<int, int64_t> urgent_stop = Marks(markers_ + "/urgent", "stop");
  ASSERT_EQ(urgent_stop.size(), 1u);
  for (int i = 0; i < 4; ++i) {
    const std::string file = absl::StrCat(markers_, "/", i);
    EXPECT_GT(Marks(file, "start").at(2), urgent_stop.at(1)) << i;
  }
  ExpectRunsNeverOverlap(markers_, 4);
}

// On the multi-host bed (five agents, each in a network namespace of its own), a member's agent
// dies (SIGKILL), its run left going in its namespace as on a host cut off: once its host is
// lost, the gang runs again, together, on the four hosts left, and the job succeeds. The agent's
// orphaned run is stopped when it comes back. (frameworks_pytorch_e2e_test: the same with a
// PyTorch DDP gang that resumes from its checkpoint.)
TEST(GangRestartHostLossE2E, AMemberWhoseAgentDiesRestartsTheGangOnTheOtherHosts) {
  TestCluster c({.agents = 5, .host_timeout = "3s", .netns = true});
  ASSERT_FALSE(c.netns_run().empty());
  ASSERT_EQ(c.Cli({"pool", "create", "/gangs", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code,
            0);
  ASSERT_TRUE(c.WaitForHosts(5));
  const std::string markers = MakeMarkersDir(c.dir());
  uint64_t job = c.CreateJob("/gangs", GangSpec(markers, /*rank=*/-1, 1, 2));
  ASSERT_GT(job, 0u);
  Json first;
  ASSERT_TRUE(WaitFor(
      [&] {
        first = c.CliJson({"task", "list", std::to_string(job)})["tasks"];
        return std::count_if(first.begin(), first.end(),
                             [](const Json& t) { return t["state"] == "RUNNING"; }) == 4;
      },
      kJobTimeout));
  std::string victim;
  for (const Json& t : first) {
    if (t["instance"] == 1) victim = t["host"];
  }
  int victim_index = -1;
  for (int i = 0; i < 5; ++i) {
    if (c.agent_name(i) == victim) victim_index = i;
  }
  ASSERT_GE(victim_index, 0) << first;
  c.agent(victim_index).Signal(SIGKILL);
  ASSERT_TRUE(c.agent(victim_index).WaitExit(absl::Seconds(10)).has_value());

  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED"; }, kJobTimeout))
      << c.Cli({"task", "list", std::to_string(job)}).out;
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) {
    EXPECT_EQ(t["run"], 2) << t;
    EXPECT_NE(t["host"], victim) << t;
  }
  const std::string why =
      absl::StrCat("gang restart (not counted): instance 1 lost its host ", victim);
  for (uint32_t i = 0; i < 4; ++i) {
    Json events = c.CliJson({"task", "events", absl::StrCat(job, "/", i)})["events"];
    bool said = false;
    for (const Json& e : events) {
      said |= e["run"] == 2 && std::string(e["message"]) == why;
    }
    EXPECT_TRUE(said) << i << ": " << events;
  }

  // The agent comes back with the run it kept: the master stops it.
  c.StartAgent(victim_index);
  ASSERT_TRUE(c.WaitForHosts(5, absl::Seconds(60)));
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const Json& h : c.CliJson({"host", "list"})["hosts"]) {
          if (h["tasks"] != 0) return false;
        }
        return true;
      },
      absl::Seconds(60)));
}

TEST_F(GangRestartE2E, AJobCompletesWithInstanceZero) {
  uint64_t job = c_.CreateJob("/gangs", R"(
name: launcher
instances: 3
completion: instance-0
task:
  resources: {cpu: 0.5, memory: 32Mi}
  command: |
    if [ "$PACELINE_INSTANCE_ID" = 0 ]; then sleep 2; exit 0; fi
    exec sleep 600
)");
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitForState(job, "SUCCEEDED")) << c_.Cli({"task", "list", std::to_string(job)}).out;
  Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) {
    if (t["instance"] == 0) {
      EXPECT_EQ(t["state"], "SUCCEEDED") << t;
      continue;
    }
    EXPECT_EQ(t["state"], "KILLED") << t;
    EXPECT_EQ(t["reason"], "JOB_COMPLETED") << t;
    Json events = Events(job, t["instance"].get<uint32_t>());
    EXPECT_EQ(events.back()["message"], "the job completes with instance 0") << events;
  }
}

// The time from a rank's death to its whole gang running again: each of `kRestarts` runs, rank
// 2 fails once every member has started; the sample is the last member's start in the next run
// minus the failure, both as the processes wrote them.
TEST_F(GangRestartE2E, GangRestartTimeIsMeasured) {
  constexpr int kRestarts = kSanitized ? 3 : 10;
  uint64_t job = c_.CreateJob("/gangs", GangSpec(markers_, 2, kRestarts, kRestarts));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED"; }, kJobTimeout * 2))
      << c_.Cli({"task", "list", std::to_string(job)}).out;
  std::map<int, int64_t> failed = Marks(markers_ + "/fail", "fail");
  ASSERT_EQ(failed.size(), static_cast<size_t>(kRestarts));
  std::vector<double> seconds;
  for (const auto& [run, at] : failed) {
    int64_t all_running = 0;
    for (int i = 0; i < 4; ++i) {
      all_running =
          std::max(all_running, Marks(absl::StrCat(markers_, "/", i), "start").at(run + 1));
    }
    seconds.push_back(static_cast<double>(all_running - at) / 1e9);
  }
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double p50 = sorted[(sorted.size() - 1) / 2];
  std::ostringstream each;
  for (double s : seconds) each << " " << s;
  std::printf(
      "gang restart (rank death -> all 4 members running again), %d restarts: p50 %.3f s, "
      "max %.3f s; each:%s\n",
      kRestarts, p50, sorted.back(), each.str().c_str());
  EXPECT_LT(p50, kSanitized ? 20.0 : 5.0);
}

}  // namespace
}  // namespace paceline::e2e
