#include "jobmgr/job.h"

#include "jobmgr/serving.h"

namespace paceline::jobmgr {

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

std::optional<TaskHealth> TaskHealthFromName(absl::string_view name) {
  for (TaskHealth h :
       {TaskHealth::kNone, TaskHealth::kUnknown, TaskHealth::kHealthy, TaskHealth::kUnhealthy}) {
    if (TaskHealthName(h) == name) return h;
  }
  return std::nullopt;
}

absl::string_view TaskReadinessName(TaskReadiness r) {
  switch (r) {
    case TaskReadiness::kUnknown:
      return "UNKNOWN";
    case TaskReadiness::kReady:
      return "READY";
    case TaskReadiness::kNotReady:
      return "NOT_READY";
    default:
      return "";
  }
}

std::optional<TaskReadiness> TaskReadinessFromName(absl::string_view name) {
  for (TaskReadiness r : {TaskReadiness::kNone, TaskReadiness::kUnknown, TaskReadiness::kReady,
                          TaskReadiness::kNotReady}) {
    if (TaskReadinessName(r) == name) return r;
  }
  return std::nullopt;
}

absl::string_view NotServingText(NotServing why) {
  switch (why) {
    case NotServing::kServing:
      return "";
    case NotServing::kNotRunning:
      return "not running";
    case NotServing::kHealthUnknown:
      return "health check not passed yet";
    case NotServing::kUnhealthy:
      return "unhealthy";
    case NotServing::kReadinessUnknown:
      return "readiness check not passed yet";
    case NotServing::kNotReady:
      return "not ready";
  }
  return "";
}

absl::Time DeadlineFrom(const Job& job, absl::Time start) {
  const absl::Duration limit = job.spec().sla.max_running_time;
  return limit > absl::ZeroDuration() ? start + limit : absl::InfiniteFuture();
}

uint32_t Job::live() const {
  return instances() - count(TaskState::kSucceeded) - count(TaskState::kFailed) -
         count(TaskState::kKilled) - count(TaskState::kLost);
}

JobState Job::state() const {
  uint32_t live_tasks = live();
  if (d_.goal == records::JobGoal::kKill)
    return live_tasks > 0 ? JobState::kKilling : JobState::kKilled;
  if (live_tasks > 0) {
    uint32_t started = count(TaskState::kRunning) + count(TaskState::kLaunching) +
                       count(TaskState::kKilling) + count(TaskState::kPreempting) +
                       count(TaskState::kSucceeded) + count(TaskState::kFailed) +
                       count(TaskState::kKilled) + count(TaskState::kLost);
    return started > 0 ? JobState::kRunning : JobState::kPending;
  }
  if (d_.spec->completion == Completion::kInstanceZero && d_.spec->type == JobType::kBatch &&
      instances() > 0) {
    // The job ended with instance 0 (the others were stopped for it, or ended before).
    switch (task(0).state) {
      case TaskState::kSucceeded:
        return JobState::kSucceeded;
      case TaskState::kFailed:
      case TaskState::kLost:
        return JobState::kFailed;
      default:
        return JobState::kKilled;
    }
  }
  if (count(TaskState::kSucceeded) == instances()) return JobState::kSucceeded;
  if (count(TaskState::kFailed) + count(TaskState::kLost) > 0) return JobState::kFailed;
  return JobState::kKilled;
}

const JobSpec* Job::SpecOf(uint64_t version) const {
  if (version == d_.version) return d_.spec.get();
  auto it = d_.old_specs.find(version);
  return it == d_.old_specs.end() ? nullptr : it->second.get();
}

std::shared_ptr<const TaskSpec> Job::TaskFor(uint32_t instance) const {
  std::shared_ptr<const JobSpec> s = SharedSpecOf(d_, d_.tasks[instance].spec_version);
  if (s == nullptr) s = d_.spec;
  const TaskSpec* task = &s->TaskRef(instance);  // its override's, its role's or the job's
  return std::shared_ptr<const TaskSpec>(std::move(s), task);  // shares the spec's count
}

std::shared_ptr<const JobSpec> SharedSpecOf(const JobData& d, uint64_t version) {
  if (version == d.version) return d.spec;
  auto it = d.old_specs.find(version);
  return it == d.old_specs.end() ? nullptr : it->second;
}

}  // namespace paceline::jobmgr
