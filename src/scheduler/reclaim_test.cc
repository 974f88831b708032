// Revocable work on allocated-but-idle capacity through the whole core: placed on a host's
// slack, reclaimed (REVOKED, with the reason) when regular work lands there or the slack
// shrinks, never for want of a usage report; and, over random histories, regular work never
// over-committed and revocable + regular work within capacity + slack on every host.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <random>

#include "scheduler/test_util.h"

namespace paceline::scheduler {
namespace {

using testing::Batch;
using testing::CoreTest;
using ::testing::HasSubstr;
using testing::Host;
using testing::kGi;
using testing::Pool;
using testing::Revocable;

class ReclaimTest : public CoreTest {
 protected:
  // Pool /a and host h1 (`cores` cores), fully allocated by a regular job of one-core tasks,
  // all running.
  void FillHost(int64_t cores) {
    Actions a;
    ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
    ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", cores), {}, now_, a).ok());
    auto id = core_->job_control().CreateJob(Batch(static_cast<uint32_t>(cores)), "/a", now_, a);
    ASSERT_TRUE(id.ok()) << id.status();
    regular_job_ = *id;
    Commit(std::move(a));
    Actions c = Cycle();
    ASSERT_EQ(c.launches.size(), static_cast<size_t>(cores));
    for (const Launch& l : c.launches) {
      Report(l, TaskState::kRunning);
      regular_runs_.push_back(l.run);
    }
  }
  JobId CreateJob(const JobSpec& spec) {
    Actions a;
    auto id = core_->job_control().CreateJob(spec, "/a", now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return id.ok() ? *id : JobId();
  }
  const jobmgr::TaskRuntime& TaskOf(TaskId t) {
    return core_->jobs().GetJob(t.job)->task(t.instance);
  }
  // The message of `t`'s latest event in `state` among `events`, or "".
  static std::string MessageOf(const Actions& a, TaskId t, TaskState state) {
    std::string m;
    for (const records::TaskEvent& e : a.batch.events) {
      if (e.run.task == t && e.state == state) m = e.message;
    }
    return m;
  }

  JobId regular_job_;
  std::vector<RunId> regular_runs_;
};

TEST_F(ReclaimTest, IdleRegularCapacityRunsRevocableWorkUntilRegularWorkNeedsIt) {
  FillHost(4);
  const TaskId be{CreateJob(Revocable(1, 3000)), 0};
  Cycle();
  EXPECT_EQ(TaskOf(be).state, TaskState::kPending) << "no usage known: no slack";

  // Each regular task uses a tenth of its core: 3.6 cores are idle.
  ReportUsage("h1", regular_runs_, Resources::Of(100, kGi / 4));
  Actions placed = Cycle();
  ASSERT_EQ(placed.launches.size(), 1u) << core_->WhyPending(be);
  EXPECT_EQ(placed.launches[0].run.task, be);
  EXPECT_EQ(placed.launches[0].host, "h1");
  Report(placed.launches[0], TaskState::kRunning);
  const placement::HostState& h1 = *core_->snapshot().host(HostId(0));
  EXPECT_EQ(h1.regular_allocated().cpu_milli(), 4000);
  EXPECT_EQ(h1.revocable_allocated().cpu_milli(), 3000);

  // A regular task ends; the revocable one still fits (4 - 3 regular + 2.7 idle >= 3).
  Report(regular_runs_[0], "h1", TaskState::kSucceeded, 0);
  EXPECT_TRUE(Cycle().kills.empty());
  // Regular work takes the freed core: 3 revocable cores no longer fit beside 4 regular ones
  // with 2.7 of them idle. The revocable task is revoked at once, with the reason.
  const TaskId regular{CreateJob(Batch(1)), 0};
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 1u);
  EXPECT_EQ(c.launches[0].run.task, regular);
  ASSERT_EQ(c.kills.size(), 1u);
  EXPECT_EQ(c.kills[0].run, (RunId{be, 1}));
  EXPECT_EQ(c.kills[0].reason, jobmgr::TaskReason::kRevoked);
  EXPECT_EQ(TaskOf(be).state, TaskState::kPreempting);
  EXPECT_EQ(TaskOf(be).reason, jobmgr::TaskReason::kRevoked);
  const std::string why = MessageOf(c, be, TaskState::kPreempting);
  EXPECT_THAT(why, HasSubstr("capacity reclaimed for regular work placed on host h1"));
  EXPECT_THAT(why, HasSubstr("cpu: regular 4 + revocable 3 held, above capacity 4 + slack 2.7"));
  EXPECT_TRUE(Cycle().kills.empty()) << "a task being revoked is not chosen again";

  // The run ends KILLED with reason REVOKED and the same explanation; it is pending again.
  Actions ended = Report(c.kills[0].run, "h1", TaskState::kKilled);
  EXPECT_EQ(MessageOf(ended, be, TaskState::kKilled), why);
  EXPECT_EQ(TaskOf(be).run, 2u);
  EXPECT_EQ(TaskOf(be).state, TaskState::kPending);
  EXPECT_TRUE(core_->snapshot().Validate().ok()) << core_->snapshot().Validate();
}

TEST_F(ReclaimTest, ShrinkingSlackRevokesTheMostRecentlyStartedRevocableTask) {
  FillHost(4);
  ReportUsage("h1", regular_runs_, Resources::Of(100, kGi / 4));
  const JobId be = CreateJob(Revocable(2, 1500));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 2u);
  Report(c.launches[0].run.task.instance == 0 ? c.launches[0] : c.launches[1], TaskState::kRunning);
  now_ += absl::Milliseconds(500);
  Report(c.launches[0].run.task.instance == 1 ? c.launches[0] : c.launches[1], TaskState::kRunning);
  ReportUsage("h1", regular_runs_, Resources::Of(100, kGi / 4));
  EXPECT_TRUE(Cycle().kills.empty()) << "3 revocable cores on 3.6 idle ones";

  // The regular tasks get busy: half a core each, 2 cores idle; 1 revocable core too many.
  ReportUsage("h1", regular_runs_, Resources::Of(500, kGi / 4));
  Actions r = Cycle();
  ASSERT_EQ(r.kills.size(), 1u);
  EXPECT_EQ(r.kills[0].run, (RunId{TaskId{be, 1}, 1})) << "the later one goes first";
  EXPECT_EQ(r.kills[0].reason, jobmgr::TaskReason::kRevoked);
  EXPECT_THAT(MessageOf(r, TaskId{be, 1}, TaskState::kPreempting),
              HasSubstr("the slack of host h1 shrank as its regular tasks use more (cpu: regular 4 "
                        "+ revocable 3 held, above capacity 4 + slack 2)"));
  EXPECT_EQ(TaskOf(TaskId{be, 0}).state, TaskState::kRunning);
  // The same usage reported again changes nothing: the excess is on its way out.
  ReportUsage("h1", regular_runs_, Resources::Of(500, kGi / 4));
  EXPECT_TRUE(Cycle().kills.empty());
}

TEST_F(ReclaimTest, StaleUsageGivesNoSlack) {
  FillHost(4);
  ReportUsage("h1", regular_runs_, Resources::Of(100, kGi / 4));
  const TaskId be{CreateJob(Revocable(1, 2000)), 0};
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 1u);
  Report(c.launches[0], TaskState::kRunning);
  const placement::HostState& h1 = *core_->snapshot().host(HostId(0));
  EXPECT_EQ(h1.slack().cpu_milli(), 3600);
  now_ += absl::Milliseconds(2900);
  EXPECT_TRUE(Cycle().kills.empty()) << "still fresh";

  // Three reporting intervals without a report: the slack is unknown, so it is zero, and the
  // revocable task that ran on it goes.
  now_ += absl::Milliseconds(100);
  Actions stale = Cycle();
  EXPECT_TRUE(h1.slack().IsZero());
  EXPECT_LT(h1.FreeFor(true).cpu_milli(), 0);
  ASSERT_EQ(stale.kills.size(), 1u);
  EXPECT_EQ(stale.kills[0].reason, jobmgr::TaskReason::kRevoked);
  EXPECT_THAT(MessageOf(stale, be, TaskState::kPreempting),
              HasSubstr("host h1 has not reported its usage lately, so its slack is unknown"));
  Report(stale.kills[0].run, "h1", TaskState::kKilled);
  const TaskId more{CreateJob(Revocable(1, 500)), 0};
  EXPECT_TRUE(Cycle().launches.empty()) << "no slack for new revocable work either";
  EXPECT_EQ(TaskOf(more).state, TaskState::kPending) << core_->WhyPending(more);

  // A fresh report brings the slack back.
  ReportUsage("h1", regular_runs_, Resources::Of(100, kGi / 4));
  Actions back = Cycle();
  EXPECT_TRUE(back.kills.empty());
  EXPECT_EQ(back.launches.size(), 2u) << core_->WhyPending(more);
  EXPECT_EQ(h1.slack().cpu_milli(), 3600);
}

TEST_F(ReclaimTest, ARevokedGangMemberTakesItsGangAlong) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 2), {}, now_, a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h2", 2), {}, now_, a).ok());
  Commit(std::move(a));
  JobSpec gang = Revocable(2, 2000);
  gang.sla.min_running_instances = 2;
  const JobId be = CreateJob(gang);
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 2u) << "one member on each host's unallocated capacity";
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);

  CreateJob(Batch(1, 2000));
  Actions r = Cycle();
  ASSERT_EQ(r.launches.size(), 1u);
  ASSERT_EQ(r.kills.size(), 2u) << "the member on the regular task's host, and its peer";
  for (const jobmgr::KillCommand& k : r.kills) {
    EXPECT_EQ(k.reason, jobmgr::TaskReason::kRevoked);
    EXPECT_EQ(k.run.task.job, be);
  }
  const uint32_t peer = r.kills[0].host == r.launches[0].host ? r.kills[1].run.task.instance
                                                              : r.kills[0].run.task.instance;
  EXPECT_THAT(MessageOf(r, TaskId{be, peer}, TaskState::kPreempting),
              HasSubstr("was revoked: capacity reclaimed for regular work placed on host " +
                        r.launches[0].host));
}

// Random histories: jobs of both kinds come and go, agents report random usage (or go quiet),
// tasks start, end and take their time to die. After every cycle, on every host: regular work
// fits the capacity, the slack is the fresh report's (zero without one), and the revocable
// work that is not on its way out fits capacity − regular + slack.
class ReclaimProperty : public ReclaimTest, public ::testing::WithParamInterface<uint64_t> {};

TEST_P(ReclaimProperty, RegularNeverOvercommittedRevocableWithinCapacityPlusSlack) {
  {
    const uint64_t seed = GetParam();
    std::mt19937_64 rng(seed);
    Actions a;
    ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(1'000'000), a).ok());
    const std::vector<std::string> hosts = {"h1", "h2", "h3", "h4"};
    for (const std::string& h : hosts)
      ASSERT_TRUE(core_->agents().RegisterHost(Host(h, 4), {}, now_, a).ok());
    Commit(std::move(a));
    std::map<RunId, std::string> running;   // run -> host
    std::map<RunId, std::string> stopping;  // killed, not yet reported
    int revoked = 0;
    int revocable_started = 0;
    for (int step = 0; step < 300; ++step) {
      SCOPED_TRACE(::testing::Message() << "step " << step);
      const int op = static_cast<int>(rng() % 8);
      if (op < 2) {
        const bool best_effort = rng() % 2 == 0;
        const uint32_t n = static_cast<uint32_t>(1 + rng() % 3);
        const int64_t cpu = 250 * static_cast<int64_t>(1 + rng() % 8);
        CreateJob(best_effort ? Revocable(n, cpu) : Batch(n, cpu));
      } else if (op < 5) {
        // One agent reports: each regular run uses a random part of what it asked.
        const std::string& h = hosts[rng() % hosts.size()];
        std::vector<ReportedUsage> usage;
        for (const auto& [run, where] : running) {
          if (where != h) continue;
          const Resources asked = core_->jobs().GetJob(run.task.job)->spec().task.resources;
          const int64_t part = static_cast<int64_t>(rng() % 5);
          usage.push_back(
              {run, Resources::Of(asked.cpu_milli() * part / 4, asked.memory_bytes() * part / 4)});
        }
        HostUsageSample sample;
        sample.interval = absl::Seconds(1);
        core_->agents().ReportUsage(h, sample, usage, now_);
      } else if (op == 5 && !running.empty()) {
        auto it = std::next(running.begin(), static_cast<long>(rng() % running.size()));
        Report(it->first, it->second, TaskState::kSucceeded, 0);
        running.erase(it);
      } else {
        now_ += absl::Milliseconds(static_cast<int64_t>(100 + rng() % 900));
      }
      // Kills take a while: about half of them are reported in each step.
      for (auto it = stopping.begin(); it != stopping.end();) {
        if (rng() % 2 == 0) {
          ++it;
          continue;
        }
        Report(it->first, it->second, TaskState::kKilled);
        it = stopping.erase(it);
      }
      Actions c = Cycle();
      for (const jobmgr::KillCommand& k : c.kills) {
        revoked += k.reason == jobmgr::TaskReason::kRevoked;
        running.erase(k.run);
        stopping[k.run] = k.host;
      }
      for (const Launch& l : c.launches) {
        Report(l, TaskState::kRunning);
        running[l.run] = l.host;
        revocable_started += core_->jobs().GetJob(l.run.task.job)->spec().sla.revocable ? 1 : 0;
      }

      const placement::ClusterSnapshot& snap = core_->snapshot();
      absl::Status valid = snap.Validate();
      ASSERT_TRUE(valid.ok()) << valid;  // regular work within capacity, on every host
      for (uint32_t slot = 0; slot < snap.slots(); ++slot) {
        const placement::HostState& h = snap.host_at(slot);
        std::optional<HostUsageView> usage = core_->agents().HostUsage(h.name(), now_);
        ASSERT_EQ(h.slack(), usage ? usage->slack : Resources()) << h.name();
        Resources live_revocable;
        for (const TaskId& t : h.tasks()) {
          const placement::Usage* u = snap.TaskUsage(t);
          const TaskState s = TaskOf(t).state;
          if (u->revocable && s != TaskState::kPreempting && s != TaskState::kKilling) {
            live_revocable += u->resources;
          }
        }
        const Resources room = h.capacity() - h.regular_allocated() + h.effective_slack();
        ASSERT_TRUE(live_revocable.FitsIn(room))
            << h.name() << ": revocable " << live_revocable.ToString() << " beyond "
            << room.ToString();
      }
    }
    EXPECT_GT(revocable_started, 10);
    EXPECT_GT(revoked, 3);
    std::cout << "seed " << seed << ": " << revocable_started << " revocable runs started, "
              << revoked << " revoked\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ReclaimProperty, ::testing::Values(7, 42, 20261121));

}  // namespace
}  // namespace paceline::scheduler
