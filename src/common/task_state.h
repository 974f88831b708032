#pragma once
// Task and job states: the vocabulary shared by the job manager, the store, the API, the CLI
// and the simulator.
//
// A task (one run of one instance) moves through:
//
//   PENDING ──admitted──▶ READY ──placed──▶ PLACED ──sent──▶ LAUNCHING ──started──▶ RUNNING
//      ▲                                                                               │
//      │ restart (new run)                           exit 0 ─▶ SUCCEEDED               │
//      └──────────── FAILED / KILLED / LOST ◀──────── exit≠0 ─▶ FAILED ◀────────────────┘
//                                                    host gone ─▶ LOST
//   Any live state ──kill──▶ KILLING ──exited──▶ KILLED
//   Any live state ──preempt──▶ PREEMPTING ──exited──▶ KILLED (reason: preempted)
//
// A job's state is derived from its tasks' states and its goal (see jobmgr/).
//
// Thread-safety: constants and pure functions.

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace paceline {

enum class TaskState : uint8_t {
  kPending = 0,
  kReady = 1,
  kPlaced = 2,
  kLaunching = 3,
  kRunning = 4,
  kSucceeded = 5,
  kFailed = 6,
  kKilled = 7,
  kLost = 8,
  kPreempting = 9,
  kKilling = 10,
};
inline constexpr int kNumTaskStates = 11;

// "PENDING", "READY", ...
absl::string_view TaskStateName(TaskState s);
std::optional<TaskState> TaskStateFromName(absl::string_view name);

// SUCCEEDED, FAILED, KILLED, LOST: the run is over and holds no resources.
constexpr bool IsTerminal(TaskState s) {
  return s == TaskState::kSucceeded || s == TaskState::kFailed || s == TaskState::kKilled ||
         s == TaskState::kLost;
}
// LAUNCHING, RUNNING, PREEMPTING, KILLING: a process may exist on a host.
constexpr bool MayHaveProcess(TaskState s) {
  return s == TaskState::kLaunching || s == TaskState::kRunning || s == TaskState::kPreempting ||
         s == TaskState::kKilling;
}
// Live, but no process yet: waiting for admission or placement.
constexpr bool IsLiveBeforeLaunch(TaskState s) {
  return s == TaskState::kPending || s == TaskState::kReady || s == TaskState::kPlaced;
}

enum class JobState : uint8_t {
  kPending = 0,    // no task has started yet
  kRunning = 1,    // some task is live
  kSucceeded = 2,  // every instance succeeded
  kFailed = 3,     // every instance is terminal and at least one failed for good
  kKilling = 4,    // the job is being killed; some task is still live
  kKilled = 5,     // the job was killed and no task is live
};
inline constexpr int kNumJobStates = 6;

absl::string_view JobStateName(JobState s);
std::optional<JobState> JobStateFromName(absl::string_view name);
constexpr bool IsTerminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kKilled;
}

}  // namespace paceline
