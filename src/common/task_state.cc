#include "common/task_state.h"

#include <array>

namespace paceline {
namespace {

constexpr std::array<absl::string_view, kNumTaskStates> kTaskStateNames = {
    "PENDING", "READY",  "PLACED", "LAUNCHING",  "RUNNING", "SUCCEEDED",
    "FAILED",  "KILLED", "LOST",   "PREEMPTING", "KILLING"};
constexpr std::array<absl::string_view, kNumJobStates> kJobStateNames = {
    "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "KILLING", "KILLED"};

}  // namespace

absl::string_view TaskStateName(TaskState s) { return kTaskStateNames[static_cast<int>(s)]; }

std::optional<TaskState> TaskStateFromName(absl::string_view name) {
  for (int i = 0; i < kNumTaskStates; ++i) {
    if (kTaskStateNames[i] == name) return static_cast<TaskState>(i);
  }
  return std::nullopt;
}

absl::string_view JobStateName(JobState s) { return kJobStateNames[static_cast<int>(s)]; }

std::optional<JobState> JobStateFromName(absl::string_view name) {
  for (int i = 0; i < kNumJobStates; ++i) {
    if (kJobStateNames[i] == name) return static_cast<JobState>(i);
  }
  return std::nullopt;
}

}  // namespace paceline
