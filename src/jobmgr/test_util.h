#pragma once
// The job manager's test fixture: a JobManager driven by hand, with a MemoryStore kept in step
// with every Effects (each one's batch is committed, as the master does) and a clock that moves
// only when the test moves `now_`. Shared by job_manager_test.cc and rolling_updates_test.cc.
//
// Tasks run on host "h1" unless a test names another; Start takes a task through the happy path
// (PENDING -> READY -> LAUNCHING -> RUNNING) and checks the launch it makes.
//
// Thread-safety: a test's own; single-threaded.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "jobmgr/job_manager.h"
#include "store/memory_store.h"

namespace paceline::jobmgr {

inline const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

class JobManagerFixture : public ::testing::Test {
 protected:
  // Runs `f` on a fresh Effects and commits its batch.
  Effects Do(const std::function<void(Effects&)>& f) {
    Effects fx;
    f(fx);
    EXPECT_TRUE(store_.Commit(fx.batch).ok());
    return fx;
  }
  // Creates a job of `spec` in /pool; its instances are PENDING.
  JobId Create(JobSpec spec) {
    JobId id;
    Do([&](Effects& fx) {
      auto r = jm_.CreateJob(std::move(spec), "/pool", now_, fx);
      ASSERT_TRUE(r.ok());
      id = *r;
    });
    return id;
  }
  // PENDING -> READY -> LAUNCHING -> RUNNING on `host`.
  void Start(TaskId t, const std::string& host = "h1") {
    Do([&](Effects& fx) { jm_.OnAdmitted(t, now_, fx); });
    Effects placed = Do([&](Effects& fx) { jm_.OnPlaced(t, {.host = host}, now_, fx); });
    ASSERT_EQ(placed.launches.size(), 1u);
    EXPECT_EQ(placed.launches[0].run, (RunId{t, Run(t)}));
    EXPECT_EQ(placed.launches[0].placed.host, host);
    Do([&](Effects& fx) { jm_.OnStatus({RunId{t, Run(t)}, host, TaskState::kRunning}, now_, fx); });
  }
  // The current run of `t` reports `state` (and exit `code`) from `host`.
  void Report(TaskId t, TaskState state, int code = 0, const std::string& host = "h1") {
    Do([&](Effects& fx) { jm_.OnStatus({RunId{t, Run(t)}, host, state, code}, now_, fx); });
  }

  const TaskRuntime& T(JobId id, uint32_t i) { return jm_.GetJob(id)->task(i); }
  uint32_t Run(TaskId t) { return T(t.job, t.instance).run; }
  TaskState State(TaskId t) { return T(t.job, t.instance).state; }

  JobManager jm_;
  store::MemoryStore store_;
  absl::Time now_ = kT0;
};

}  // namespace paceline::jobmgr
