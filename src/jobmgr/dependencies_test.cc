// depends_on in the job manager: a job is held until the jobs it names end as required, then
// released (enqueued) or failed; names resolve to ids at creation; dependencies never change by
// an update; a held job survives a restart of the master.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "jobmgr/dependencies.h"
#include "jobmgr/job_manager.h"
#include "jobmgr/test_util.h"

namespace paceline::jobmgr {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

JobSpec Spec(const std::string& name, JobType type = JobType::kBatch) {
  JobSpec s;
  s.name = name;
  s.type = type;
  s.instances = 2;
  s.task.command = "run";
  s.task.resources = Resources::Of(100, int64_t{64} << 20);
  return s;
}

class DependenciesTest : public JobManagerFixture {
 protected:
  JobSpec After(const std::string& name, JobId dep,
                DependencyCondition c = DependencyCondition::kSucceeded) {
    JobSpec s = Spec(name);
    s.depends_on.push_back({.job = std::to_string(dep.value()), .condition = c});
    return s;
  }
  // Runs every instance of `id` to its end: exit `code` (0: SUCCEEDED, else FAILED).
  void RunToEnd(JobId id, int code) {
    for (uint32_t i = 0; i < jm_.GetJob(id)->instances(); ++i) {
      Start({id, i});
      Report({id, i}, code == 0 ? TaskState::kSucceeded : TaskState::kFailed, code);
    }
  }
  Effects Tick() {
    return Do([&](Effects& fx) { jm_.Tick(now_, fx); });
  }
  static bool Enqueued(const Effects& fx, JobId id) {
    return std::any_of(fx.enqueue.begin(), fx.enqueue.end(),
                       [&](const TaskId& t) { return t.job == id; });
  }
  TaskReason Reason(JobId id, uint32_t i = 0) { return T(id, i).reason; }
  records::TaskRecord StoredTask(TaskId t) {
    auto contents = store_.Load();
    EXPECT_TRUE(contents.ok());
    for (const records::TaskRecord& r : contents->tasks) {
      if (r.id == t) return r;
    }
    ADD_FAILURE() << "no stored record of " << t.ToString();
    return {};
  }
  records::JobRecord StoredJob(JobId id) {
    auto contents = store_.Load();
    EXPECT_TRUE(contents.ok());
    for (const records::JobRecord& r : contents->jobs) {
      if (r.id == id) return r;
    }
    ADD_FAILURE() << "no stored record of job " << id.value();
    return {};
  }
};

TEST_F(DependenciesTest, AHeldJobStartsOnlyOnceItsDependencySucceeded) {
  JobId a = Create(Spec("a"));
  JobId b;
  Effects created = Do([&](Effects& fx) { b = *jm_.CreateJob(After("b", a), "/pool", now_, fx); });
  EXPECT_FALSE(Enqueued(created, b));
  EXPECT_EQ(jm_.GetJob(b)->state(), JobState::kPending);
  EXPECT_EQ(Reason(b), TaskReason::kWaitingForDependencies);
  EXPECT_EQ(WhyHeld(*jm_.GetJob(b), [&](JobId id) { return jm_.GetJob(id); }),
            "waiting for job 1 (PENDING) to succeed");
  // Stored as held: a restarted master knows.
  EXPECT_EQ(StoredTask(TaskId{b, 1}).reason, "WAITING_FOR_DEPENDENCIES");

  Start({a, 0});
  EXPECT_FALSE(Enqueued(Tick(), b));
  Report({a, 0}, TaskState::kSucceeded);
  EXPECT_FALSE(Enqueued(Tick(), b)) << "one instance of a is still live";
  Start({a, 1});
  Report({a, 1}, TaskState::kSucceeded);
  ASSERT_EQ(jm_.GetJob(a)->state(), JobState::kSucceeded);
  Effects released = Tick();
  EXPECT_EQ(released.enqueue, (std::vector<TaskId>{{b, 0}, {b, 1}}));
  EXPECT_EQ(Reason(b, 1), TaskReason::kDependenciesMet);
  EXPECT_FALSE(Enqueued(Tick(), b)) << "released once";
}

TEST_F(DependenciesTest, AConditionThatCanNoLongerHoldFailsTheJobWithItsReason) {
  JobId a = Create(Spec("a"));
  JobId ok = Create(After("ok", a));
  JobId on_failure = Create(After("on-failure", a, DependencyCondition::kFailed));
  JobId any = Create(After("any", a, DependencyCondition::kFinished));
  RunToEnd(a, 3);
  ASSERT_EQ(jm_.GetJob(a)->state(), JobState::kFailed);
  Effects fx = Tick();
  EXPECT_EQ(jm_.GetJob(ok)->state(), JobState::kFailed);
  EXPECT_EQ(Reason(ok, 1), TaskReason::kDependencyNeverMet);
  EXPECT_FALSE(Enqueued(fx, ok));
  auto events = store_.ListEvents(TaskId{ok, 0}, 0);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().reason, "DEPENDENCY_NEVER_MET");
  EXPECT_EQ(events->back().message, "job 1 ended FAILED; this job needed it to succeed");
  EXPECT_TRUE(Enqueued(fx, on_failure));
  EXPECT_TRUE(Enqueued(fx, any));
}

TEST_F(DependenciesTest, AKilledDependencyCountsAsFailedAndAKilledHeldJobJustEnds) {
  JobId a = Create(Spec("a"));
  JobId ok = Create(After("ok", a));
  JobId on_failure = Create(After("on-failure", a, DependencyCondition::kFailed));
  JobId after_ok = Create(After("after-ok", ok, DependencyCondition::kFinished));
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(on_failure, now_, fx).ok()); });
  EXPECT_EQ(jm_.GetJob(on_failure)->state(), JobState::kKilled);
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(a, now_, fx).ok()); });
  Effects fx = Tick();
  EXPECT_FALSE(Enqueued(fx, on_failure)) << "killed while held: never starts";
  EXPECT_EQ(jm_.GetJob(ok)->state(), JobState::kFailed);
  EXPECT_EQ(Reason(ok), TaskReason::kDependencyNeverMet);
  // ok's end (FAILED) settles the job that waits for it to finish, at the next tick.
  EXPECT_TRUE(Enqueued(Tick(), after_ok));
}

TEST_F(DependenciesTest, AChainRunsInOrderAndARestartedDependencyIsNotAnEnd) {
  JobSpec flaky = Spec("a");
  flaky.task.restart = {.policy = RestartPolicy::kOnFailure, .max_failures = 1};
  JobId a = Create(flaky);
  JobId b = Create(After("b", a));
  JobId c = Create(After("c", b));
  Start({a, 0});
  Start({a, 1});
  Report({a, 0}, TaskState::kSucceeded);
  Report({a, 1}, TaskState::kFailed, 1);  // restarts: a is live again
  EXPECT_FALSE(Enqueued(Tick(), b));
  EXPECT_EQ(Reason(b), TaskReason::kWaitingForDependencies);
  now_ += absl::Minutes(10);  // past the backoff
  Tick();
  Start({a, 1});
  Report({a, 1}, TaskState::kSucceeded);
  Effects fx = Tick();
  EXPECT_TRUE(Enqueued(fx, b));
  EXPECT_FALSE(Enqueued(fx, c));
  EXPECT_EQ(WhyHeld(*jm_.GetJob(c), [&](JobId id) { return jm_.GetJob(id); }),
            absl::StrCat("waiting for job ", b.value(), " (PENDING) to succeed"));
  RunToEnd(b, 0);
  EXPECT_TRUE(Enqueued(Tick(), c));
}

TEST_F(DependenciesTest, DependenciesThatEndedBeforeCreationDecideAtOnce) {
  JobId a = Create(Spec("a"));
  RunToEnd(a, 0);
  JobId b;
  Effects fx = Do([&](Effects& f) { b = *jm_.CreateJob(After("b", a), "/pool", now_, f); });
  EXPECT_TRUE(Enqueued(fx, b));
  EXPECT_EQ(Reason(b), TaskReason::kDependenciesMet);
  JobId c;
  fx = Do([&](Effects& f) {
    c = *jm_.CreateJob(After("c", a, DependencyCondition::kFailed), "/pool", now_, f);
  });
  EXPECT_FALSE(Enqueued(fx, c));
  EXPECT_EQ(jm_.GetJob(c)->state(), JobState::kFailed);
}

TEST_F(DependenciesTest, NamesResolveToTheNewestJobOfThatNameInThePoolAndAreStoredAsIds) {
  JobId old_etl = Create(Spec("etl"));
  JobId etl = Create(Spec("etl"));
  JobId other_pool;
  Do([&](Effects& fx) { other_pool = *jm_.CreateJob(Spec("etl"), "/other", now_, fx); });
  JobSpec b = Spec("b");
  b.depends_on = {{.job = "etl"}, {.job = std::to_string(old_etl.value())}};
  JobId id = Create(b);
  ASSERT_EQ(jm_.GetJob(id)->spec().depends_on.size(), 2u);
  EXPECT_EQ(jm_.GetJob(id)->spec().depends_on[0].job, std::to_string(etl.value()));
  EXPECT_EQ(StoredJob(id).spec.depends_on[0].job, std::to_string(etl.value()));
  EXPECT_NE(other_pool, etl);
}

TEST_F(DependenciesTest, UnknownJobsAndRepeatsAreRefusedAndChangeNothing) {
  JobId a = Create(Spec("a"));
  for (const auto& [deps, code, text] :
       std::vector<std::tuple<std::vector<JobDependency>, absl::StatusCode, std::string>>{
           {{{.job = "2"}},
            absl::StatusCode::kNotFound,
            "depends_on[0].job: job 2 not found; a job can depend only on jobs that exist"},
           {{{.job = "nightly"}},
            absl::StatusCode::kNotFound,
            "depends_on[0].job: no job named 'nightly' in pool /pool"},
           {{{.job = "1"}, {.job = "a"}},
            absl::StatusCode::kInvalidArgument,
            "depends_on[1].job: 'a' is job 1, which depends_on[0] names already"}}) {
    JobSpec b = Spec("b");
    b.depends_on = deps;
    Effects fx;
    absl::StatusOr<JobId> r = jm_.CreateJob(b, "/pool", now_, fx);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code);
    EXPECT_THAT(std::string(r.status().message()), StartsWith(text));
    EXPECT_TRUE(fx.enqueue.empty());
    EXPECT_TRUE(fx.batch.put_jobs.empty());
    EXPECT_TRUE(fx.batch.put_tasks.empty());
  }
  // A refusal uses no id: a job cannot wait for a job made after it, so no cycle can form.
  EXPECT_EQ(Create(Spec("c")), JobId(a.value() + 1));
}

TEST_F(DependenciesTest, AHeldJobSurvivesARestartOfTheMaster) {
  JobId a = Create(Spec("a"));
  JobId b = Create(After("b", a));
  JobId c = Create(After("c", a));
  RunToEnd(a, 0);  // the master dies before the tick that settles b and c
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  EXPECT_TRUE(Enqueued(fx, b));
  EXPECT_TRUE(Enqueued(fx, c));

  // Held and not yet settled: a restored master keeps it held, then releases it.
  JobId d = Create(Spec("d"));
  JobId e = Create(After("e", d));
  contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager again;
  Effects fx2;
  ASSERT_TRUE(again.Restore(*contents, now_, fx2).ok());
  EXPECT_FALSE(Enqueued(fx2, e));
  EXPECT_EQ(again.GetJob(e)->task(0).reason, TaskReason::kWaitingForDependencies);
  Effects killed;
  ASSERT_TRUE(again.KillJob(d, now_, killed).ok());
  Effects settled;
  again.Tick(now_, settled);
  EXPECT_EQ(again.GetJob(e)->state(), JobState::kFailed);
}

TEST_F(DependenciesTest, AHeldJobCannotBeUpdatedAndItsDependencyCannotBeDeleted) {
  JobId a = Create(Spec("a"));
  JobId b = Create(After("b", a));
  JobSpec changed = jm_.GetJob(b)->spec();
  changed.task.command = "run v2";
  absl::StatusOr<uint64_t> r;
  Do([&](Effects& fx) { r = jm_.updates().Start(b, {changed, 1, UpdateSpec{}}, now_, fx); });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("waits for its dependencies"));
  EXPECT_EQ(jm_.GetJob(b)->version(), 1u);

  RunToEnd(a, 0);
  absl::Status del;
  Do([&](Effects& fx) { del = jm_.DeleteJob(a, fx); });
  EXPECT_EQ(del.code(), absl::StatusCode::kFailedPrecondition) << "b is not settled yet";
  EXPECT_THAT(del.message(), HasSubstr(absl::StrCat("is a dependency of job ", b.value())));
  Tick();
  Do([&](Effects& fx) { del = jm_.DeleteJob(a, fx); });
  EXPECT_TRUE(del.ok()) << del;
  EXPECT_EQ(Reason(b), TaskReason::kDependenciesMet);
}

TEST_F(DependenciesTest, AnUpdateThatChangesDependsOnIsRefused) {
  JobId a = Create(Spec("a"));
  JobId web = Create(Spec("web", JobType::kService));
  JobSpec changed = Spec("web", JobType::kService);
  changed.task.command = "run v2";
  changed.depends_on.push_back({.job = std::to_string(a.value())});
  absl::StatusOr<uint64_t> r;
  Do([&](Effects& fx) {
    UpdateRequest req{changed, jm_.GetJob(web)->version(), UpdateSpec{}};
    r = jm_.updates().Start(web, std::move(req), now_, fx);
    EXPECT_TRUE(fx.enqueue.empty());
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), StartsWith("depends_on: "));
  EXPECT_THAT(r.status().message(), HasSubstr("cannot change by an update"));
  EXPECT_EQ(jm_.GetJob(web)->version(), 1u);
  // The same update without the change goes ahead.
  changed.depends_on.clear();
  Do([&](Effects& fx) {
    r = jm_.updates().Start(web, {changed, jm_.GetJob(web)->version(), UpdateSpec{}}, now_, fx);
  });
  EXPECT_TRUE(r.ok()) << r.status();
}

}  // namespace
}  // namespace paceline::jobmgr
