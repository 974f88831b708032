#pragma once
// Dependencies: jobs that wait for other jobs (spec `depends_on`, docs/specs.md "Dependencies").
//
// A job created with `depends_on` (its entries already job ids: dependency_names.h) is HELD:
// its tasks stay PENDING with reason WAITING_FOR_DEPENDENCIES, stored, and none is enqueued.
// Whenever a job ends, the jobs held on it are settled, in job id order:
//   - every dependency ended as its condition asks  ->  RELEASED: each task PENDING with reason
//     DEPENDENCIES_MET (stored) and enqueued, in instance order (a gang stays one gang);
//   - some dependency ended otherwise, or no longer exists  ->  FAILED: each task FAILED with
//     reason DEPENDENCY_NEVER_MET and a message naming the job and how it ended;
//   - otherwise it stays held.
// Conditions: succeeded = the job SUCCEEDED; failed = FAILED or KILLED; finished = any end.
// A job that is held is settled when it is created (its dependencies may have ended already),
// after a restart of the master (Restore: the stored reason says which jobs are held), and
// after each job's end (TaskLifecycle notes the jobs whose last live task ended; Settle reads
// them at the next Tick, when a restart that followed the end has made the job live again).
// A held job killed by the user simply ends (KILLED); its own dependents are settled then.
//
// Thread-safety: single-threaded (part of the JobManager).

#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/effects.h"
#include "jobmgr/job.h"
#include "jobmgr/job_table.h"
#include "jobmgr/task_lifecycle.h"

namespace paceline::jobmgr {

// Where a held job stands: every dependency met, one that can never be met, or still waiting;
// `why` says which dependency and how (empty when met).
struct DependencyVerdict {
  enum Kind { kMet, kNeverMet, kWaiting } kind = kMet;
  std::string why;
};

// The job id a depends_on entry names once resolved (digits, no leading zero), or nullopt for
// a job name.
std::optional<JobId> DependencyId(absl::string_view entry);

// Why a held job waits, e.g. "waiting for job 12 (RUNNING) to succeed"; `find` looks jobs up.
std::string WhyHeld(const Job& job, absl::FunctionRef<const Job*(JobId)> find);

// Whether `job` is held for its dependencies (its tasks PENDING, WAITING_FOR_DEPENDENCIES).
bool WaitsForDependencies(const Job& job);

class Dependencies {
 public:
  Dependencies(JobTable& jobs, TaskLifecycle& life) : jobs_(jobs), life_(life) {}

  // A new job with depends_on: held (its tasks' records written), then settled at once.
  void Hold(MutableJob& job, absl::Time now, Effects& fx);
  // A job restored held (Restore); Settle all of them with SettleAll once every job is back.
  void NoteRestoredHeld(JobId id);
  void SettleAll(absl::Time now, Effects& fx);
  // Settles the jobs held on the jobs that ended since the last call.
  void Settle(absl::Time now, Effects& fx);
  // Jobs held on `id`, by id (a job that has them may not be deleted).
  std::vector<JobId> HeldOn(JobId id) const;

 private:
  // Releases, fails or keeps `job` held, as its dependencies say.
  void SettleJob(MutableJob& job, absl::Time now, Effects& fx);
  // Releases or fails `job` (verdict met or never met).
  void Decide(MutableJob& job, const DependencyVerdict& v, absl::Time now, Effects& fx);
  const Job* Find(JobId id) const;
  void Forget(const Job& job);

  JobTable& jobs_;
  TaskLifecycle& life_;
  // dependency -> the held jobs waiting for it.
  absl::flat_hash_map<JobId, absl::btree_set<JobId>> held_on_;
};

}  // namespace paceline::jobmgr
