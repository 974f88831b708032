#pragma once
// Host maintenance: the operator's state machine of a host and what draining does to its tasks.
//
//   UP ──drain──> DRAINING ──(no live task left)──> DRAINED ──down──> DOWN ──up──> UP
//   (up is allowed from DRAINING and DRAINED too: the host takes work again)
//
// While a host drains, no new task is placed on it (placement sees its status); each cycle
// moves its tasks elsewhere: batch tasks at once (killed and rescheduled, reason HOST_DRAINING),
// instances of long-running jobs one job's max_unavailable_instances at a time, counting the
// job's instances that are not available (not RUNNING, or not HEALTHY when checked); daemon
// instances are stopped.
//
// Pure functions over the host records and the job manager; the caller (the scheduler) applies
// the job manager's effects and persists the host records.
//
// Thread-safety: pure functions; the JobManager is the caller's.

#include <string>

#include "absl/status/statusor.h"
#include "hostmgr/host_tracker.h"
#include "jobmgr/job_manager.h"
#include "placement/host_state.h"
#include "records/records.h"

namespace paceline::hostmgr {

// What placement must know of a host in this maintenance state.
placement::HostStatus StatusOf(records::HostMaintenance m);

// The durable record of a host.
records::HostRecord RecordOf(const TrackedHost& h);

// Whether `h` may go to `next`: true when it changes state, false when it is there already (or
// drained already, for a drain). FAILED_PRECONDITION, saying what to do first, for DRAINING from
// DOWN and for DOWN before DRAINED (with the number of live tasks).
absl::StatusOr<bool> CheckTransition(const TrackedHost& h, records::HostMaintenance next,
                                     const jobmgr::JobManager& jobs);

// One drain step of a DRAINING host: moves what may move now off it (see above). Returns true
// when no live task is left on it (it is DRAINED).
bool DrainStep(const TrackedHost& h, jobmgr::JobManager& jobs, absl::Time now, jobmgr::Effects& fx);

}  // namespace paceline::hostmgr
