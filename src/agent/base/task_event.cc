#include "agent/base/task_event.h"

#include "absl/strings/str_cat.h"

namespace paceline::agent {

absl::string_view TaskEventTypeName(TaskEventType t) {
  switch (t) {
    case TaskEventType::kRunning:
      return "RUNNING";
    case TaskEventType::kExited:
      return "EXITED";
    case TaskEventType::kKilled:
      return "KILLED";
    case TaskEventType::kFailed:
      return "FAILED";
    case TaskEventType::kLost:
      return "LOST";
    case TaskEventType::kHealth:
      return "HEALTH";
    case TaskEventType::kReadiness:
      return "READINESS";
  }
  return "?";
}

absl::string_view TerminationReasonName(TerminationReason r) {
  switch (r) {
    case TerminationReason::kNone:
      return "NONE";
    case TerminationReason::kExited:
      return "EXITED";
    case TerminationReason::kSignaled:
      return "SIGNALED";
    case TerminationReason::kOomKilled:
      return "OOM_KILLED";
    case TerminationReason::kKilledGracefully:
      return "KILLED_GRACEFULLY";
    case TerminationReason::kKilledForcibly:
      return "KILLED_FORCIBLY";
    case TerminationReason::kLaunchFailed:
      return "LAUNCH_FAILED";
    case TerminationReason::kLost:
      return "LOST";
  }
  return "?";
}

absl::string_view HealthStateName(HealthState h) {
  switch (h) {
    case HealthState::kUnknown:
      return "UNKNOWN";
    case HealthState::kHealthy:
      return "HEALTHY";
    case HealthState::kUnhealthy:
      return "UNHEALTHY";
  }
  return "?";
}

absl::string_view ReadinessStateName(ReadinessState r) {
  switch (r) {
    case ReadinessState::kUnknown:
      return "UNKNOWN";
    case ReadinessState::kReady:
      return "READY";
    case ReadinessState::kNotReady:
      return "NOT_READY";
  }
  return "?";
}

ReadinessState ReadinessFromHealth(HealthState h) {
  switch (h) {
    case HealthState::kHealthy:
      return ReadinessState::kReady;
    case HealthState::kUnhealthy:
      return ReadinessState::kNotReady;
    case HealthState::kUnknown:
      break;
  }
  return ReadinessState::kUnknown;
}

std::string TaskEvent::ToString() const {
  std::string out = absl::StrCat("seq=", seq, " ", run.ToString(), " ", TaskEventTypeName(type));
  if (reason != TerminationReason::kNone) {
    absl::StrAppend(&out, " reason=", TerminationReasonName(reason));
  }
  if (pid != 0) absl::StrAppend(&out, " pid=", pid);
  if (exit_code) absl::StrAppend(&out, " code=", *exit_code);
  if (signal) absl::StrAppend(&out, " signal=", *signal);
  if (type == TaskEventType::kHealth) absl::StrAppend(&out, " ", HealthStateName(health));
  if (type == TaskEventType::kReadiness) {
    absl::StrAppend(&out, " ", ReadinessStateName(readiness));
  }
  if (!message.empty()) absl::StrAppend(&out, " (", message, ")");
  return out;
}

}  // namespace paceline::agent
