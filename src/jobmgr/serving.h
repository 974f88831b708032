#pragma once
// Serving: whether an instance's current run takes traffic — the rule behind a service's
// endpoints, its DNS answers and its deregistration delay (docs/services.md). A run serves while
// it is RUNNING (not being stopped), its health check (if any) passes and its readiness check (if
// any) has passed. Whether its host's agent is connected is for the edge to add.
//
// Thread-safety: pure functions.

#include "absl/strings/string_view.h"
#include "jobmgr/job.h"

namespace paceline::jobmgr {

// Why a run does not serve; kServing when it does.
enum class NotServing : uint8_t {
  kServing,
  kNotRunning,        // not started yet, being stopped, or ended
  kHealthUnknown,     // its health check has not passed yet
  kUnhealthy,         // its health check fails
  kReadinessUnknown,  // its readiness check has not passed yet
  kNotReady,          // its readiness check fails
};

inline NotServing ServingOf(const TaskRuntime& t) {
  if (t.state != TaskState::kRunning) return NotServing::kNotRunning;
  if (t.health == TaskHealth::kUnknown) return NotServing::kHealthUnknown;
  if (t.health == TaskHealth::kUnhealthy) return NotServing::kUnhealthy;
  if (t.readiness == TaskReadiness::kUnknown) return NotServing::kReadinessUnknown;
  if (t.readiness == TaskReadiness::kNotReady) return NotServing::kNotReady;
  return NotServing::kServing;
}

inline bool Serving(const TaskRuntime& t) { return ServingOf(t) == NotServing::kServing; }

// How long instance `i` keeps running after leaving its endpoints before its stop begins: the
// task's deregistration delay if the run serves now, else zero (nobody sends to it).
inline absl::Duration DeregistrationDelay(const Job& job, uint32_t i) {
  if (!Serving(job.task(i))) return absl::ZeroDuration();
  return DeregistrationDelayOf(job.spec().type, job.spec().TaskRef(i));
}

// "", "not running", "health check not passed yet", "unhealthy", "readiness check not passed
// yet", "not ready".
absl::string_view NotServingText(NotServing why);

}  // namespace paceline::jobmgr
