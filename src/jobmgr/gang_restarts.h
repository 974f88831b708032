#pragma once
// GangRestarts: what follows the end of a run, for the job manager — the gang failure policy
// (job.gang.restart: gang) over the instance's own restart policy (TaskLifecycle::EndRun), and
// the completion policy (job.completion: instance-0). Every run that ends goes through EndRun.
//
// A gang is sla.min_running_instances consecutive instances, aligned on multiples of that size
// (scheduler/scheduler_core.h). Under `restart: gang` (a gang of more than one instance):
//
//     members run ──(a member fails, is preempted or loses its host)──► restart in progress:
//        ▲          the member's run ends; every other live member is     every member stopping,
//        │          killed (GANG_RESTART, "gang restart 2/3: instance 3   none restarted alone
//        │          failed: exit 137")                                          │
//        └──── the last member stopped: every member gets a new run, PENDING, ◄─┘
//              all in one Effects (the scheduler enqueues them as one gang, placed together),
//              with gang_attempt + 1 (a new rendezvous) and the cause in its PENDING event
//
//   - A member's failure (it failed, failed to start, or a long-running member exited) uses one
//     of max_restarts: the members' `failures` summed are the restarts used. With all used, the
//     failure fails the gang instead: the member ends FAILED ("no gang restarts left (3 of 3
//     used): ..."), every other live member is killed (GANG_FAILED) with that message, and none
//     runs again: the job fails.
//   - A member preempted, moved off a draining host, revoked or lost with its host restarts the
//     gang without using the budget ("gang restart (not counted): instance 1 was preempted"):
//     nothing the job did, as torchrun does not count membership changes. gang_attempt counts
//     every restart (each is a new rendezvous).
//   - Not failures: a member that exits 0 (batch jobs; a long-running member's exit is one), a
//     run stopped on purpose (a kill by the user, a deadline, an update, the job's kill), and a
//     user's restart of one member (it runs again alone, in the same attempt).
//   - Members stopped for a gang restart, a failed gang or a completed job never restart on their
//     own, even when their host is lost while they stop.
//   - Every member of the gang runs again, those that had succeeded or been killed included: a
//     rendezvous waits for the whole gang.
//   - The attempt lives in each run (TaskRuntime::gang_attempt, stored in its TaskRecord); a
//     restart in progress is the members' reason GANG_RESTART, stored with each member's record,
//     so both survive a restart of the master (EndRun goes on as members report; Resume
//     relaunches a gang whose members had all stopped).
//
// Completion (batch jobs, completion: instance-0): once instance 0's run ended and no new run
// of it follows, the job is done: every other live instance is killed (JOB_COMPLETED, "the job
// completes with instance 0"), and the job's state is instance 0's (jobmgr/job.h).
//
// Thread-safety: single-threaded (part of the JobManager).

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/effects.h"
#include "jobmgr/host_names.h"
#include "jobmgr/mutable_job.h"
#include "jobmgr/task_lifecycle.h"
#include "records/records.h"

namespace paceline::jobmgr {

// Whether a job's gangs restart together: restart: gang and a gang of more than one instance.
bool RestartsAsGang(const JobSpec& spec);

class GangRestarts {
 public:
  GangRestarts(const HostNames& hosts, TaskLifecycle& life) : hosts_(hosts), life_(life) {}

  // The run of `instance` ended in terminal state `ended` (as the agent reported it, or LOST):
  // the gang failure policy, else the instance's restart policy, then the completion policy.
  void EndRun(MutableJob& job, uint32_t instance, TaskState ended, TaskReason reason,
              const std::string& message, absl::Time now, Effects& fx);

  // After a restore, for each stored task: the cause of a gang restart or failure in progress
  // (the message its members' records keep).
  void NoteRestored(const Job& job, const records::TaskRecord& r);
  // After a restore: relaunches the gangs of `job` whose restart was in progress and whose
  // members have all stopped.
  void Resume(MutableJob& job, absl::Time now, Effects& fx);

 private:
  using Key = std::pair<JobId, uint32_t>;  // a job and a gang's index
  struct Range {
    uint32_t first = 0;
    uint32_t end = 0;  // one past the last member
  };
  static Range GangOf(const Job& job, uint32_t instance);

  // A member failed (its run is still live): restart the gang, or fail it when the restarts
  // are spent.
  void OnFailure(MutableJob& job, uint32_t instance, TaskState ended, TaskReason reason,
                 const std::string& message, absl::Time now, Effects& fx);
  // Stops every other live member of `gang` with `reason` and `cause`.
  void StopOthers(MutableJob& job, Range gang, uint32_t except, TaskReason reason,
                  const std::string& cause, absl::Time now, Effects& fx);
  // When no member of the gang of `instance` is live: a new run for each, together.
  void RelaunchIfStopped(MutableJob& job, uint32_t instance, absl::Time now, Effects& fx);
  // completion: instance-0: whether the job is done (instance 0 ended, and does not run again),
  // and the kill of the other instances once it is.
  static bool Completed(const Job& job);
  void CompleteWithInstanceZero(MutableJob& job, absl::Time now, Effects& fx);
  // Whether the gang of `instance` has a restart in progress (a member stopped for it).
  static bool Restarting(const Job& job, uint32_t instance);
  // "instance 3 failed: exit 137", "instance 1 lost its host h2", ...
  std::string Describe(const Job& job, uint32_t instance, TaskState ended, TaskReason reason,
                       const std::string& message) const;

  const HostNames& hosts_;
  TaskLifecycle& life_;
  // The cause of each gang restart or failure in progress, as its members' events say it.
  absl::flat_hash_map<Key, std::string> causes_;
};

}  // namespace paceline::jobmgr
