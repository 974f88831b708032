#pragma once
// The restart policy of a task, as a pure decision: after a run ended, does the instance run
// again, and when?
//
//   never       a run that ended is final (batch default).
//   on-failure  FAILED and LOST runs are retried while failures <= max_failures; SUCCEEDED is
//               final.
//   always      every end is followed by a new run (services); max_failures is ignored.
//   LOST runs (host gone) are retried under every policy except when the job is being killed:
//   the task did not fail, its host did.
//   Runs that were killed (by the user, a deadline or preemption) are not "restarted" here:
//   preempted tasks go back to PENDING by the job manager, killed ones stay KILLED.
//
// Backoff: initial_backoff * 2^(failures-1), capped at max_backoff; no delay for LOST and for
// the first restart after a success (services).
//
// Thread-safety: pure functions.

#include <cstdint>

#include "absl/time/time.h"
#include "common/task_state.h"
#include "spec/job_spec.h"

namespace paceline::jobmgr {

struct RestartDecision {
  bool restart = false;
  absl::Time not_before;  // earliest start of the next run
};

// `failures` counts failed runs including the one that just ended.
// The restart policy an instance follows: its task's (its override's, its role's or the job's),
// except that long-running jobs (service, stateful, daemon) always restart, with the task's
// backoff and max_failures.
RestartSpec EffectiveRestart(const JobSpec& spec, uint32_t instance);

RestartDecision DecideRestart(const RestartSpec& spec, TaskState ended, uint32_t failures,
                              absl::Time now);

absl::Duration Backoff(const RestartSpec& spec, uint32_t failures);

}  // namespace paceline::jobmgr
