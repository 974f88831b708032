// Backfill through the whole core: the job's max_running_time reaches the resource manager,
// a backfilled task's events say so, the waiting gang's reason names its reservation, and a
// backfilled task that overruns its limit is killed at it, so the reservation holds
// (docs/resource-manager.md "Backfill").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/scheduler_core.h"
#include "scheduler/test_util.h"

namespace paceline::scheduler {
namespace {

using ::testing::HasSubstr;

using testing::Batch;
using testing::CoreTest;
using testing::Host;
using testing::Pool;

JobSpec Limited(const std::string& name, uint32_t instances, absl::Duration limit,
                uint32_t gang = 1) {
  JobSpec s = Batch(instances);
  s.name = name;
  s.sla.max_running_time = limit;
  s.sla.min_running_instances = gang;
  return s;
}

// How many of `job`'s tasks `a` launches.
size_t LaunchesOf(const Actions& a, JobId job) {
  size_t n = 0;
  for (const Launch& l : a.launches) n += l.run.task.job == job ? 1 : 0;
  return n;
}

std::vector<const records::TaskEvent*> EventsOf(const Actions& a, JobId job) {
  std::vector<const records::TaskEvent*> out;
  for (const records::TaskEvent& e : a.batch.events) {
    if (e.run.task.job == job) out.push_back(&e);
  }
  return out;
}

TEST_F(CoreTest, ABackfilledTaskOverrunningItsLimitIsKilledAndTheReservationHolds) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(10'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 10), {}, now_, a).ok());
  auto running =
      core_->job_control().CreateJob(Limited("running", 6, absl::Hours(1)), "/a", now_, a);
  ASSERT_TRUE(running.ok()) << running.status();
  Commit(std::move(a));
  Actions first = Cycle();
  ASSERT_EQ(first.launches.size(), 6u);
  for (const Launch& l : first.launches) Report(l, TaskState::kRunning);
  const absl::Time frees = now_ + absl::Hours(1);  // `running` is killed at its limit then

  // An 8-core gang waits for `running`; a short job fits the 4 idle cores meanwhile.
  now_ += absl::Minutes(1);
  Actions b;
  auto wide = core_->job_control().CreateJob(Limited("wide", 8, absl::Hours(1), 8), "/a", now_, b);
  ASSERT_TRUE(wide.ok()) << wide.status();
  auto no_limit = core_->job_control().CreateJob(Batch(1), "/a", now_, b);
  ASSERT_TRUE(no_limit.ok());
  auto short_job =
      core_->job_control().CreateJob(Limited("short", 2, absl::Minutes(10)), "/a", now_, b);
  ASSERT_TRUE(short_job.ok());
  Commit(std::move(b));
  core_->agents().Heartbeat("h1", now_);
  Actions second = Cycle();
  ASSERT_EQ(second.launches.size(), 2u)
      << core_->WhyPending(TaskId{*short_job, 0}) << " / " << core_->WhyPending(TaskId{*wide, 0});
  for (const Launch& l : second.launches) EXPECT_EQ(l.run.task.job, *short_job);
  bool noted = false;
  for (const records::TaskEvent* e : EventsOf(second, *short_job)) {
    if (e->state == TaskState::kReady) {
      EXPECT_THAT(e->message, HasSubstr("backfilled ahead of gang "));
      noted = true;
    }
  }
  EXPECT_TRUE(noted);
  const std::string reserved =
      absl::StrCat("from ", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", frees, absl::UTCTimeZone()));
  EXPECT_THAT(core_->WhyPending(TaskId{*wide, 0}), HasSubstr("reserved for gang "));
  EXPECT_THAT(core_->WhyPending(TaskId{*wide, 0}), HasSubstr(reserved));
  // A job without a limit is never started ahead of the reserved gang.
  EXPECT_THAT(core_->WhyPending(TaskId{*no_limit, 0}), HasSubstr(reserved));

  // The short tasks run past their 10 minutes: they are killed at the limit.
  for (const Launch& l : second.launches) Report(l, TaskState::kRunning);
  now_ += absl::Minutes(10) + absl::Seconds(1);
  core_->agents().Heartbeat("h1", now_);
  Actions third = Cycle();
  ASSERT_EQ(third.kills.size(), 2u);
  for (const jobmgr::KillCommand& k : third.kills) EXPECT_EQ(k.run.task.job, *short_job);
  for (const jobmgr::KillCommand& k : third.kills) Report(k.run, k.host, TaskState::kKilled);
  EXPECT_THAT(core_->WhyPending(TaskId{*wide, 0}), HasSubstr(reserved));

  // `running` reaches its limit: the wide gang starts on the capacity reserved for it.
  now_ = frees + absl::Seconds(1);
  core_->agents().Heartbeat("h1", now_);
  Actions fourth = Cycle();
  ASSERT_EQ(fourth.kills.size(), 6u);
  for (const jobmgr::KillCommand& k : fourth.kills) Report(k.run, k.host, TaskState::kKilled);
  Actions fifth = Cycle();
  EXPECT_EQ(LaunchesOf(fifth, *wide), 8u);
}

JobSpec Sized(JobSpec s, int64_t cpu_milli) {
  s.task.resources = Resources::Of(cpu_milli, testing::kGi);
  return s;
}

// Five 4-core hosts in pool /a (20 cores), two of them busy with `busy`'s two 3-core tasks until
// 10 minutes at the latest (its limit).
class HostsHeldTest : public CoreTest {
 protected:
  const std::vector<std::string> names_ = {"h0", "h1", "h2", "h3", "h4"};

  // Starts `busy`; its launches (running).
  std::vector<Launch> StartBusy() {
    Actions a;
    EXPECT_TRUE(core_->pools().CreatePool("/a", Pool(20'000), a).ok());
    for (const std::string& n : names_) {
      EXPECT_TRUE(core_->agents().RegisterHost(Host(n, 4), {}, now_, a).ok());
    }
    auto busy = core_->job_control().CreateJob(Sized(Limited("busy", 2, absl::Minutes(10)), 3000),
                                               "/a", now_, a);
    EXPECT_TRUE(busy.ok()) << busy.status();
    Commit(std::move(a));
    Actions first = Cycle();
    EXPECT_EQ(first.launches.size(), 2u);
    for (const Launch& l : first.launches) Report(l, TaskState::kRunning);
    return first.launches;
  }
  // `wide`, a gang of seven 2-core members for 1 h: with `busy` running, the pool has room for
  // it, the hosts for six members only.
  absl::StatusOr<JobId> CreateWide(Actions& a) {
    return core_->job_control().CreateJob(Sized(Limited("wide", 7, absl::Hours(1), 7), 2000), "/a",
                                          now_, a);
  }
  std::vector<std::string> HeldHosts() const {
    std::vector<std::string> held;
    for (uint32_t slot = 0; slot < core_->snapshot().slots(); ++slot) {
      if (core_->snapshot().present(slot) && core_->snapshot().host_at(slot).held_for() != 0) {
        held.push_back(core_->snapshot().host_at(slot).name());
      }
    }
    return held;
  }
  void HeartbeatAll() {
    for (const std::string& n : names_) core_->agents().Heartbeat(n, now_);
  }
};

// Backfill on hosts (docs/resource-manager.md "Backfill on hosts"): a gang its pool has room for
// but whose members find no hosts waits unadmitted, with hosts held for it; work that ends later
// than the hold goes only to other hosts; the gang starts on its hosts as they free.
TEST_F(HostsHeldTest, AGangThatFitsItsPoolButNotTheHostsWaitsWithHostsHeldAndStartsWhenTheyFree) {
  // Two 3-core tasks take two hosts; three hosts stay empty.
  const std::vector<Launch> busy = StartBusy();
  ASSERT_EQ(busy.size(), 2u);
  ASSERT_NE(busy[0].host, busy[1].host);

  // Seven 2-core members: the pool has 14 cores free, the hosts room for six members only.
  now_ += absl::Seconds(1);
  Actions b;
  auto wide = CreateWide(b);
  ASSERT_TRUE(wide.ok()) << wide.status();
  auto later = core_->job_control().CreateJob(Sized(Limited("later", 1, absl::Hours(1)), 1000),
                                              "/a", now_, b);
  ASSERT_TRUE(later.ok());
  Commit(std::move(b));
  Actions second = Cycle();
  EXPECT_THAT(core_->WhyPending(TaskId{*wide, 0}), HasSubstr("do not fit on the hosts yet"));
  const std::vector<std::string> held = HeldHosts();
  EXPECT_EQ(held.size(), 4u);  // the three empty hosts and one of the busy ones
  // `later` ends after the hold: it runs, beside the gang's capacity, on the one host not held.
  ASSERT_EQ(second.launches.size(), 1u) << core_->WhyPending(TaskId{*later, 0});
  EXPECT_EQ(second.launches[0].run.task.job, *later);
  EXPECT_THAT(held, ::testing::Not(::testing::Contains(second.launches[0].host)));
  Report(second.launches[0], TaskState::kRunning);

  // `busy` ends early: its held host has room, and the gang starts on its hosts.
  now_ += absl::Minutes(2);
  HeartbeatAll();
  for (const Launch& l : busy) Report(l, TaskState::kSucceeded, 0);
  Actions third = Cycle();
  EXPECT_EQ(LaunchesOf(third, *wide), 7u) << core_->WhyPending(TaskId{*wide, 0});
  for (uint32_t slot = 0; slot < core_->snapshot().slots(); ++slot) {
    if (core_->snapshot().present(slot)) {
      EXPECT_EQ(core_->snapshot().host_at(slot).held_for(), 0u);
    }
  }
}

// A later gang that ends before the waiting gang's hosts are due may use them meanwhile, as
// any task that ends by then may (placement filter held_hosts): it is backfilled on them.
TEST_F(HostsHeldTest, AGangThatEndsBeforeAHoldIsBackfilledOnTheHeldHosts) {
  const std::vector<Launch> busy = StartBusy();
  ASSERT_EQ(busy.size(), 2u);

  // `wide` holds the three empty hosts and a busy one until `busy` ends (10 min). Two gangs of
  // two whole-host members follow: `short` ends by then, `long` does not.
  now_ += absl::Seconds(1);
  Actions b;
  auto wide = CreateWide(b);
  auto short_gang = core_->job_control().CreateJob(
      Sized(Limited("short", 2, absl::Minutes(5), 2), 4000), "/a", now_, b);
  auto long_gang = core_->job_control().CreateJob(
      Sized(Limited("long", 2, absl::Hours(1), 2), 4000), "/a", now_, b);
  ASSERT_TRUE(wide.ok() && short_gang.ok() && long_gang.ok());
  Commit(std::move(b));
  Actions second = Cycle();
  const std::vector<std::string> held = HeldHosts();
  ASSERT_EQ(held.size(), 4u);
  ASSERT_EQ(second.launches.size(), 2u) << core_->WhyPending(TaskId{*short_gang, 0});
  for (const Launch& l : second.launches) {
    EXPECT_EQ(l.run.task.job, *short_gang);
    EXPECT_THAT(held, ::testing::Contains(l.host));
    Report(l, TaskState::kRunning);
  }
  EXPECT_THAT(core_->WhyPending(TaskId{*long_gang, 0}), HasSubstr("reserved for gang "));

  // `short` ends, then `busy`: `wide` starts on its hosts; `long` has to wait for it.
  now_ += absl::Minutes(5);
  HeartbeatAll();
  for (const Launch& l : second.launches) Report(l, TaskState::kSucceeded, 0);
  Cycle();
  now_ += absl::Minutes(5);
  HeartbeatAll();
  for (const Launch& l : busy) Report(l, TaskState::kSucceeded, 0);
  Actions third = Cycle();
  EXPECT_EQ(LaunchesOf(third, *wide), 7u) << core_->WhyPending(TaskId{*wide, 0});
}

// A single task behind the waiting gang that its pool has room for but no host does (the one
// host not held is full, and it ends after the hold) stays queued behind the gang: admitted,
// it would only hold capacity and fail placement. It starts once a host has room.
TEST_F(HostsHeldTest, ASingleTaskNoHostHasRoomForIsNotBackfilled) {
  const std::vector<Launch> busy = StartBusy();
  ASSERT_EQ(busy.size(), 2u);

  // `wide` holds four hosts until `busy` ends; `later` takes the free core of the fifth host;
  // `after` (two cores) fits beside the gang's capacity, but on no host.
  now_ += absl::Seconds(1);
  Actions b;
  auto wide = CreateWide(b);
  auto later = core_->job_control().CreateJob(Sized(Limited("later", 1, absl::Hours(1)), 1000),
                                              "/a", now_, b);
  ASSERT_TRUE(wide.ok() && later.ok());
  Commit(std::move(b));
  Actions second = Cycle();
  ASSERT_EQ(second.launches.size(), 1u) << core_->WhyPending(TaskId{*later, 0});
  Report(second.launches[0], TaskState::kRunning);
  now_ += absl::Seconds(1);
  HeartbeatAll();
  Actions c;
  auto after = core_->job_control().CreateJob(Sized(Limited("after", 1, absl::Hours(1)), 2000),
                                              "/a", now_, c);
  ASSERT_TRUE(after.ok());
  Commit(std::move(c));
  Actions third = Cycle();
  EXPECT_TRUE(third.launches.empty());
  EXPECT_EQ(core_->jobs().GetJob(*after)->task(0).state, TaskState::kPending);
  EXPECT_THAT(core_->WhyPending(TaskId{*after, 0}), HasSubstr("reserved for gang "));

  // `busy` ends: `wide` starts on its hosts, and `after` on the room left.
  now_ += absl::Minutes(2);
  HeartbeatAll();
  for (const Launch& l : busy) Report(l, TaskState::kSucceeded, 0);
  size_t wide_launches = 0;
  size_t after_launches = 0;
  for (int i = 0; i < 3; ++i) {
    const Actions next = Cycle();
    wide_launches += LaunchesOf(next, *wide);
    after_launches += LaunchesOf(next, *after);
  }
  EXPECT_EQ(wide_launches, 7u) << core_->WhyPending(TaskId{*wide, 0});
  EXPECT_EQ(after_launches, 1u) << core_->WhyPending(TaskId{*after, 0});
}

// A waiting gang whose held hosts are still busy when other hosts free takes only as many of
// those as its members need: the rest are left to the next gang of the same cycle, which then
// starts beside it instead of finding every free host held.
TEST_F(HostsHeldTest, AGangAdmittedOnFreedHostsLeavesTheHostsItDoesNotNeedToTheNextGang) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(20'000), a).ok());
  for (const std::string& n : names_) {
    ASSERT_TRUE(core_->agents().RegisterHost(Host(n, 4), {}, now_, a).ok());
  }
  // A 3-core task on each host: `soon` (limit 5 min) and `later`'s four (limit 10 min).
  auto soon = core_->job_control().CreateJob(Sized(Limited("soon", 1, absl::Minutes(5)), 3000),
                                             "/a", now_, a);
  auto later = core_->job_control().CreateJob(Sized(Limited("later", 4, absl::Minutes(10)), 3000),
                                              "/a", now_, a);
  ASSERT_TRUE(soon.ok() && later.ok());
  Commit(std::move(a));
  Actions first = Cycle();
  ASSERT_EQ(first.launches.size(), 5u);
  std::string soon_host;
  for (const Launch& l : first.launches) {
    Report(l, TaskState::kRunning);
    if (l.run.task.job == *soon) soon_host = l.host;
  }

  // Two gangs of two 2-core members: the pool has room, no host does. The first holds
  // `soon`'s host (it frees first); the second waits behind it.
  now_ += absl::Seconds(1);
  Actions b;
  auto first_gang = core_->job_control().CreateJob(
      Sized(Limited("first", 2, absl::Hours(1), 2), 2000), "/a", now_, b);
  auto second_gang = core_->job_control().CreateJob(
      Sized(Limited("second", 2, absl::Hours(1), 2), 2000), "/a", now_, b);
  ASSERT_TRUE(first_gang.ok() && second_gang.ok());
  Commit(std::move(b));
  Actions second = Cycle();
  EXPECT_TRUE(second.launches.empty());
  EXPECT_THAT(HeldHosts(), ::testing::ElementsAre(soon_host));

  // `later` ends early and frees four hosts while `soon` runs: each gang takes one of them.
  now_ += absl::Minutes(1);
  HeartbeatAll();
  for (const Launch& l : first.launches) {
    if (l.run.task.job == *later) Report(l, TaskState::kSucceeded, 0);
  }
  Actions third = Cycle();
  EXPECT_EQ(LaunchesOf(third, *first_gang), 2u) << core_->WhyPending(TaskId{*first_gang, 0});
  EXPECT_EQ(LaunchesOf(third, *second_gang), 2u) << core_->WhyPending(TaskId{*second_gang, 0});
}

// Admission found hosts with room for the gang's members; a single task admitted before it in
// the same cycle could take part of that room, so placement places the gang first.
TEST_F(CoreTest, AGangAdmittedOnHostsWithRoomIsPlacedBeforeTheSingleTasksOfItsCycle) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(20'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h0", 4), {}, now_, a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  // One core first, then two members of 3.5 cores: on either host, the single task would leave
  // no room for a member.
  auto single = core_->job_control().CreateJob(Sized(Limited("single", 1, absl::Hours(1)), 1000),
                                               "/a", now_, a);
  ASSERT_TRUE(single.ok()) << single.status();
  auto wide = core_->job_control().CreateJob(Sized(Limited("wide", 2, absl::Hours(1), 2), 3500),
                                             "/a", now_, a);
  ASSERT_TRUE(wide.ok()) << wide.status();
  Commit(std::move(a));
  Actions first = Cycle();
  ASSERT_EQ(first.launches.size(), 2u) << core_->WhyPending(TaskId{*wide, 0});
  for (const Launch& l : first.launches) EXPECT_EQ(l.run.task.job, *wide);
  EXPECT_THAT(core_->WhyPending(TaskId{*single, 0}), HasSubstr("hosts"));
}

// A gang that waits for its pool's bounds gets no hosts held when they free before the bounds
// allow it: held, they would sit idle for it.
TEST_F(CoreTest, AGangWaitingForItsPoolHoldsNoHostsThatFreeBeforeThePoolLetsItStart) {
  Actions a;
  PoolSpec limited = Pool(8'000);
  limited.dim(Dim::kCpu).limit = 8'000;
  ASSERT_TRUE(core_->pools().CreatePool("/a", limited, a).ok());
  ASSERT_TRUE(core_->pools().CreatePool("/b", Pool(4'000), a).ok());
  for (const char* n : {"h0", "h1", "h2"}) {
    ASSERT_TRUE(core_->agents().RegisterHost(Host(n, 4), {}, now_, a).ok());
  }
  // /b's two 3-core tasks take two hosts until 5 min; /a's 4 cores run until 10 min.
  auto other = core_->job_control().CreateJob(Sized(Limited("other", 2, absl::Minutes(5)), 3000),
                                              "/b", now_, a);
  auto busy = core_->job_control().CreateJob(Sized(Limited("busy", 1, absl::Minutes(10)), 4000),
                                             "/a", now_, a);
  ASSERT_TRUE(other.ok() && busy.ok());
  Commit(std::move(a));
  Actions first = Cycle();
  ASSERT_EQ(first.launches.size(), 3u);
  for (const Launch& l : first.launches) Report(l, TaskState::kRunning);

  // Two 4-core members: the hosts free by 5 min, /a's limit of 8 cores only by 10 min.
  now_ += absl::Seconds(1);
  Actions b;
  auto wide = core_->job_control().CreateJob(Sized(Limited("wide", 2, absl::Hours(1), 2), 4000),
                                             "/a", now_, b);
  ASSERT_TRUE(wide.ok());
  Commit(std::move(b));
  Cycle();
  EXPECT_THAT(core_->WhyPending(TaskId{*wide, 0}), HasSubstr("reserved for gang "));
  for (uint32_t slot = 0; slot < core_->snapshot().slots(); ++slot) {
    if (core_->snapshot().present(slot)) {
      EXPECT_EQ(core_->snapshot().host_at(slot).held_for(), 0u) << slot;
    }
  }
}

}  // namespace
}  // namespace paceline::scheduler
