#pragma once
// Accounting: the usage of the runs that a write batch ends (records/usage.h), for the same
// batch. A run ends exactly once, with one terminal event (SUCCEEDED, FAILED, KILLED, LOST) and
// the record of its run in the batch that carries it; its usage is written in that batch, so it
// is durable exactly when its end is: a master that stops before the commit loses both and
// learns the end again (from the agent, or as LOST), one that stops after it has both, and
// neither a restart nor a failover counts a run twice or forgets one that ended.
//
// The usage of a run is the task's allocation (its run's job version, its instance's override
// or role applied) times the time from when it started RUNNING to its end, attributed to the
// job's pool, the job (id and name), the spec's owner and the user who created the job.
//
// Thread-safety: a pure function of the core, called on its thread.

#include <vector>

#include "jobmgr/job_manager.h"
#include "records/records.h"

namespace paceline::scheduler {

// The usage of every run that `batch` ends (a terminal event with its run's record), split by
// hour. Runs of jobs the job manager no longer has, and runs that never started RUNNING, are
// not counted.
std::vector<records::UsageRecord> UsageOfEndedRuns(const jobmgr::JobManager& jobs,
                                                   const records::WriteBatch& batch);

}  // namespace paceline::scheduler
