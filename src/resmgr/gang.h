#pragma once
// Gangs: the unit of admission. A gang is one task, or tasks that must start together (a job's
// min_running_instances). The caller describes one with a GangRequest; the resource manager
// keeps a Gang record from Enqueue until its last task is released or the gang is cancelled.
//
// Life of a gang (each arrow is a call on ResourceManager or a decision of RunCycle):
//
//   Enqueue ──► QUEUED ──RunCycle admits──► ADMITTED ──RunCycle preempts──► PREEMPTING
//                 │                           │  MarkRunning(task): task RUNNING  │
//                 │ Cancel                    │ Release(task) for every task      │ Release(task)
//                 ▼                           ▼                                   ▼ for each
//               gone                        gone                                 gone
//
// A gang's tasks are admitted together; after that each task is released on its own. Cancel
// withdraws a queued gang, or releases whatever an admitted gang still holds.
//
// Thread-safety: value types.

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/packed_time.h"
#include "common/resources.h"
#include "resmgr/types.h"
#include "resmgr/wait_reason.h"

namespace paceline::resmgr {

struct TaskRequest {
  TaskId id;
  Resources resources;
};

// What the caller asks: everything the resource manager needs to know about a gang.
struct GangRequest {
  GangId id;  // unique; chosen by the caller
  JobId job;
  PoolId pool;                     // a leaf pool
  std::vector<TaskRequest> tasks;  // >= 1
  int32_t priority = 0;            // higher first
  SlaClass sla = SlaClass::kPreemptible;
  bool controller = false;  // e.g. a Spark driver: counts against controller_limit
  // The job's max_running_instances (0 = no throttle): admitted-and-not-released tasks of the
  // job never exceed it. The latest request of a job sets the job's value.
  uint32_t max_running_instances = 0;
  // The job's sla.max_running_time: each task is killed that long after it starts (by the job
  // manager), so an admitted gang holds its resources until at most its start + this. Zero = no
  // limit: the gang is never backfilled, and once admitted counts as never ending.
  absl::Duration max_running_time = absl::ZeroDuration();
  // The job's sla.expected_running_time (zero = none): only predicts when a reserved gang
  // starts; never decides admission.
  absl::Duration expected_running_time = absl::ZeroDuration();
};

enum class GangState : uint8_t { kQueued = 0, kAdmitted = 1, kPreempting = 2 };
enum class TaskState : uint8_t { kQueued = 0, kAdmitted = 1, kRunning = 2, kReleased = 3 };

struct TaskRecord {
  TaskId id;
  Resources resources;
  PackedTime started;  // the infinite past until it runs
  TaskState state = TaskState::kQueued;
};

// One record per gang, so one per task for most jobs: the fields are packed (PackedTime, the
// one-byte fields together) to keep it at 240 bytes.
struct Gang {
  // Hot: read by every admission pass.
  GangId id;
  JobId job;
  uint64_t seq = 0;  // enqueue order, unique
  // max_running_time of the request in nanoseconds (0 = none); estimate_ns below.
  int64_t limit_ns = 0;
  uint32_t job_slot = 0;  // RmState's index of the job's counters
  PoolId pool;
  int32_t priority = 0;
  uint32_t live = 0;             // tasks not yet released
  uint32_t candidate_index = 0;  // position in its pool's candidates (admitted, preemptible)
  SlaClass sla = SlaClass::kPreemptible;
  bool controller = false;
  GangState state = GangState::kQueued;
  bool running = false;  // at least one task running
  Resources held;        // the tasks not yet released (all of them while queued)
  // Most gangs have one task: keep it inline.
  absl::InlinedVector<TaskRecord, 1> tasks;
  // Cold.
  WaitReason reason;  // while queued: why the last cycle did not admit it
  PackedTime enqueued;
  PackedTime admitted;
  PackedTime last_start;
  // While preempting for an intra-pool earmark: the gang it was preempted for.
  GangId preempted_for;
  bool has_preempted_for = false;
  // expected_running_time of the request, in nanoseconds (0 = none).
  int64_t estimate_ns = 0;

  Ledger ledger() const { return LedgerOf(sla); }
  int lane() const { return LaneOf(sla, controller); }
  // The time that orders victims: the latest task start, or the admission time.
  absl::Time victim_time() const { return running ? last_start : admitted; }
  // While admitted: when it holds nothing any more at the latest (its last task's start, or
  // the admission until a task runs, + max_running_time); InfiniteFuture without a limit.
  // With `expected`: the same with expected_running_time where given (backfill.h).
  absl::Time EndBound(bool expected) const {
    const int64_t d = expected && estimate_ns > 0 ? estimate_ns : limit_ns;
    if (d <= 0) return absl::InfiniteFuture();
    return absl::Time(running ? last_start : admitted) + absl::Nanoseconds(d);
  }
};

}  // namespace paceline::resmgr
