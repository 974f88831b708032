#pragma once
// TaskEvent: one status update the runtime produces for the master. Events are numbered by a
// per-agent sequence that only grows (also across agent restarts) and are kept in the durable
// Outbox until acknowledged.
//
// Per run the master sees, in order:
//   RUNNING (pid, ports, sandbox)  [HEALTH ... | READINESS ...]  then exactly one terminal event:
//   EXITED  reason EXITED (exit_code) | SIGNALED (signal) | OOM_KILLED
//           (also a run that ended by itself while a kill waited for its deregistration delay)
//   KILLED  reason KILLED_GRACEFULLY (ended within the grace after SIGTERM)
//                | KILLED_FORCIBLY (needed SIGKILL at the grace deadline)
//   FAILED  reason LAUNCH_FAILED (the command could not be started; message says why)
//   LOST    reason LOST (the agent cannot know how the run ended; message says why)
// HEALTH events carry `health` (HEALTHY / UNHEALTHY: the liveness check changed), READINESS
// events `readiness` (READY / NOT_READY: the readiness check changed; never a restart or kill).
// Neither is terminal, and neither comes after a kill was requested (the checks stop then).
// Delivery is at least once: after a crash at the wrong instant an event may be repeated with a
// new sequence number; a terminal event for an already terminal run is a no-op for the master.
//
// Thread-safety: value types.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/ids.h"

namespace paceline::agent {

enum class TaskEventType : uint8_t {
  kRunning,
  kExited,
  kKilled,
  kFailed,
  kLost,
  kHealth,
  kReadiness,
};
enum class TerminationReason : uint8_t {
  kNone,
  kExited,
  kSignaled,
  kOomKilled,
  kKilledGracefully,
  kKilledForcibly,
  kLaunchFailed,
  kLost,
};
enum class HealthState : uint8_t { kUnknown, kHealthy, kUnhealthy };
// A readiness check's state: the same machine as health (health_checker.h), other names.
enum class ReadinessState : uint8_t { kUnknown, kReady, kNotReady };

absl::string_view TaskEventTypeName(TaskEventType t);          // "RUNNING", ...
absl::string_view TerminationReasonName(TerminationReason r);  // "OOM_KILLED", ...
absl::string_view HealthStateName(HealthState h);              // "HEALTHY", ...
absl::string_view ReadinessStateName(ReadinessState r);        // "READY", "NOT_READY", ...
// A readiness check's outcome from its checker's state (HEALTHY: READY, UNHEALTHY: NOT_READY).
ReadinessState ReadinessFromHealth(HealthState h);

struct TaskEvent {
  uint64_t seq = 0;  // assigned by the Outbox
  absl::Time time;
  RunId run;
  TaskEventType type = TaskEventType::kRunning;
  TerminationReason reason = TerminationReason::kNone;
  int pid = 0;                                 // RUNNING
  std::optional<int> exit_code;                // terminal, when the process exited
  std::optional<int> signal;                   // terminal, when the process died of a signal
  HealthState health = HealthState::kUnknown;  // HEALTH
  ReadinessState readiness = ReadinessState::kUnknown;  // READINESS
  std::map<std::string, uint16_t> ports;                // RUNNING
  std::string sandbox;                                  // RUNNING
  std::string message;                                  // human explanation

  bool terminal() const {
    return type != TaskEventType::kRunning && type != TaskEventType::kHealth &&
           type != TaskEventType::kReadiness;
  }
  // "seq=7 3/0/1 EXITED reason=EXITED code=0" for logs and tests.
  std::string ToString() const;
  friend bool operator==(const TaskEvent&, const TaskEvent&) = default;
};

}  // namespace paceline::agent
