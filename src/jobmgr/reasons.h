#pragma once
// TaskReason: why a task entered its current state. Every transition carries one; the store
// and the API carry its name (e.g. "EXIT_NONZERO"), with a free-text message beside it.
//
// Thread-safety: constants and pure functions.

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace paceline::jobmgr {

enum class TaskReason : uint8_t {
  kNone = 0,
  kCreated,             // PENDING: the job was created (or grown)
  kRestarting,          // PENDING: a new run after the previous one ended (see restart policy)
  kAdmitted,            // READY: the resource manager admitted the task's gang
  kPlaced,              // PLACED: the placement engine chose a host
  kLaunchSent,          // LAUNCHING: recorded and sent to the host's agent
  kStarted,             // RUNNING: the agent started the process
  kExitedZero,          // SUCCEEDED
  kExitNonzero,         // FAILED: exit code != 0
  kSignaled,            // FAILED: killed by a signal nobody asked for
  kOomKilled,           // FAILED: exceeded its memory limit
  kLaunchFailed,        // FAILED: the agent could not start it
  kKilledByUser,        // KILLING / KILLED: job or task kill
  kPreempted,           // PREEMPTING / KILLED: reclaimed by the resource manager
  kDeadlineExceeded,    // KILLING / KILLED: ran longer than sla.max_running_time
  kHostLost,            // LOST: its host stopped heartbeating or never came back
  kOrphaned,            // KILLED: found on an agent with no record in the master
  kMaxFailuresReached,  // FAILED for good: restart policy exhausted
  kHealthy,             // RUNNING: the run's health check passed (after UNKNOWN or UNHEALTHY)
  kUnhealthy,           // RUNNING: the run's health check failed `failures` times in a row
  kUpdated,             // KILLING / KILLED: replaced by a run of a new job version (update)
  kScaledDown,          // KILLING / KILLED: removed by an update that shrank the job
  kHostDraining,        // PREEMPTING / KILLED: moved off a host being drained (runs elsewhere)
  kHostLeft,            // KILLING / KILLED: a daemon instance whose host left (drained, down, lost)
  kRevoked,             // PREEMPTING / KILLED: a revocable task whose host needs its capacity back
  kGangRestart,         // KILLING / KILLED: its gang restarts together (job.gang.restart: gang)
  kGangFailed,          // KILLING / KILLED / FAILED: its gang failed with no gang restarts left
  kJobCompleted,        // KILLING / KILLED: the job completed with instance 0 (job.completion)
  kReady,               // RUNNING: the run's readiness check passed (it takes traffic)
  kNotReady,            // RUNNING: the run's readiness check failed `failures` times in a row
  kWaitingForDependencies,  // PENDING: the job waits for the jobs of its depends_on to end
  kDependenciesMet,         // PENDING: every dependency ended as required; admission may start
  kDependencyNeverMet,      // FAILED: a dependency ended in a way that can never satisfy it
  kGpuUnhealthy,  // RUNNING: a GPU the run holds was found unhealthy; the run goes on (an event)
};

absl::string_view TaskReasonName(TaskReason r);
std::optional<TaskReason> TaskReasonFromName(absl::string_view name);

}  // namespace paceline::jobmgr
