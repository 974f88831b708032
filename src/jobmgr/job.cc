#include "jobmgr/job.h"

namespace paceline::jobmgr {

Job::Job(JobId id, std::string pool, std::shared_ptr<const JobSpec> spec, uint64_t version,
         store::JobGoal goal, absl::Time created_at)
    : id_(id),
      pool_(std::move(pool)),
      spec_(std::move(spec)),
      version_(version),
      goal_(goal),
      created_at_(created_at),
      tasks_(spec_->instances) {
  counts_[static_cast<int>(TaskState::kPending)] = spec_->instances;
  health_counts_[static_cast<int>(TaskHealth::kNone)] = spec_->instances;
}

absl::string_view TaskHealthName(TaskHealth h) {
  switch (h) {
    case TaskHealth::kUnknown:
      return "UNKNOWN";
    case TaskHealth::kHealthy:
      return "HEALTHY";
    case TaskHealth::kUnhealthy:
      return "UNHEALTHY";
    default:
      return "";
  }
}

void Job::SetHealth(uint32_t instance, TaskHealth h) {
  TaskRuntime& t = tasks_[instance];
  --health_counts_[static_cast<int>(t.health)];
  ++health_counts_[static_cast<int>(h)];
  t.health = h;
}

void Job::SetState(uint32_t instance, TaskState s) {
  TaskRuntime& t = tasks_[instance];
  --counts_[static_cast<int>(t.state)];
  ++counts_[static_cast<int>(s)];
  t.state = s;
}

uint32_t Job::live() const {
  return instances() - count(TaskState::kSucceeded) - count(TaskState::kFailed) -
         count(TaskState::kKilled) - count(TaskState::kLost);
}

JobState Job::state() const {
  uint32_t live_tasks = live();
  if (goal_ == store::JobGoal::kKill)
    return live_tasks > 0 ? JobState::kKilling : JobState::kKilled;
  if (live_tasks > 0) {
    uint32_t started = count(TaskState::kRunning) + count(TaskState::kLaunching) +
                       count(TaskState::kKilling) + count(TaskState::kPreempting) +
                       count(TaskState::kSucceeded) + count(TaskState::kFailed) +
                       count(TaskState::kKilled) + count(TaskState::kLost);
    return started > 0 ? JobState::kRunning : JobState::kPending;
  }
  if (count(TaskState::kSucceeded) == instances()) return JobState::kSucceeded;
  if (count(TaskState::kFailed) + count(TaskState::kLost) > 0) return JobState::kFailed;
  return JobState::kKilled;
}

store::JobRecord Job::ToRecord() const {
  return store::JobRecord{id_, pool_, *spec_, version_, goal_, created_at_};
}

}  // namespace paceline::jobmgr
