#include "jobmgr/reasons.h"

#include <array>

namespace paceline::jobmgr {
namespace {

constexpr std::array<absl::string_view, 34> kNames = {"",
                                                      "CREATED",
                                                      "RESTARTING",
                                                      "ADMITTED",
                                                      "PLACED",
                                                      "LAUNCH_SENT",
                                                      "STARTED",
                                                      "EXITED_ZERO",
                                                      "EXIT_NONZERO",
                                                      "SIGNALED",
                                                      "OOM_KILLED",
                                                      "LAUNCH_FAILED",
                                                      "KILLED_BY_USER",
                                                      "PREEMPTED",
                                                      "DEADLINE_EXCEEDED",
                                                      "HOST_LOST",
                                                      "ORPHANED",
                                                      "MAX_FAILURES_REACHED",
                                                      "HEALTHY",
                                                      "UNHEALTHY",
                                                      "UPDATED",
                                                      "SCALED_DOWN",
                                                      "HOST_DRAINING",
                                                      "HOST_LEFT",
                                                      "REVOKED",
                                                      "GANG_RESTART",
                                                      "GANG_FAILED",
                                                      "JOB_COMPLETED",
                                                      "READY",
                                                      "NOT_READY",
                                                      "WAITING_FOR_DEPENDENCIES",
                                                      "DEPENDENCIES_MET",
                                                      "DEPENDENCY_NEVER_MET",
                                                      "GPU_UNHEALTHY"};

}  // namespace

absl::string_view TaskReasonName(TaskReason r) { return kNames[static_cast<int>(r)]; }

std::optional<TaskReason> TaskReasonFromName(absl::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<TaskReason>(i);
  }
  return std::nullopt;
}

}  // namespace paceline::jobmgr
