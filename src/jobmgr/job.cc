#include "jobmgr/job.h"

#include "absl/container/flat_hash_set.h"
#include "common/check.h"

namespace paceline::jobmgr {

Job::Job(JobId id, std::string pool, std::shared_ptr<const JobSpec> spec, uint64_t version,
         records::JobGoal goal, JobOrigin origin)
    : id_(id),
      pool_(std::move(pool)),
      spec_(std::move(spec)),
      version_(version),
      goal_(goal),
      origin_(std::move(origin)),
      tasks_(spec_->instances) {
  for (TaskRuntime& t : tasks_) t.spec_version = static_cast<uint32_t>(version_);
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
  if (goal_ == records::JobGoal::kKill)
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

const JobSpec* Job::SpecOf(uint64_t version) const {
  if (version == version_) return spec_.get();
  auto it = old_specs_.find(version);
  return it == old_specs_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const JobSpec> Job::SharedSpecOf(uint64_t version) const {
  if (version == version_) return spec_;
  auto it = old_specs_.find(version);
  return it == old_specs_.end() ? nullptr : it->second;
}

std::shared_ptr<const TaskSpec> Job::TaskFor(uint32_t instance) const {
  std::shared_ptr<const JobSpec> s = SharedSpecOf(tasks_[instance].spec_version);
  if (s == nullptr) s = spec_;
  if (s->instance_overrides.contains(instance)) {
    return std::make_shared<const TaskSpec>(s->TaskFor(instance));
  }
  const TaskSpec* task = &s->task;
  return std::shared_ptr<const TaskSpec>(std::move(s), task);  // shares the spec's count
}

void Job::SetSpec(std::shared_ptr<const JobSpec> spec, uint64_t version) {
  PL_CHECK(version > version_) << version << " after " << version_;
  old_specs_[version_] = std::move(spec_);
  spec_ = std::move(spec);
  version_ = version;
}

void Job::PruneOldSpecs(size_t keep) {
  absl::flat_hash_set<uint64_t> used;
  for (const TaskRuntime& t : tasks_) {
    used.insert(t.spec_version);
    if (t.next_spec_version != 0) used.insert(t.next_spec_version);
  }
  for (const records::UpdateRecord& u : updates_) {
    if (records::IsActive(u.state)) used.insert(u.from_version);
  }
  size_t unused_seen = 0;
  for (auto it = old_specs_.rbegin(); it != old_specs_.rend();) {
    if (used.contains(it->first) || unused_seen++ < keep) {
      ++it;
    } else {
      it = decltype(it)(old_specs_.erase(std::next(it).base()));
    }
  }
}

void Job::Resize(uint32_t n) {
  while (tasks_.size() > n) {
    const TaskRuntime& t = tasks_.back();
    --counts_[static_cast<int>(t.state)];
    --health_counts_[static_cast<int>(t.health)];
    tasks_.pop_back();
  }
  while (tasks_.size() < n) {
    TaskRuntime& t = tasks_.emplace_back();
    t.spec_version = static_cast<uint32_t>(version_);
    ++counts_[static_cast<int>(t.state)];
    ++health_counts_[static_cast<int>(t.health)];
  }
}

void Job::RestoreHistory(const records::JobRecord& r) {
  for (const auto& [version, spec] : r.old_specs) {
    old_specs_[version] = std::make_shared<const JobSpec>(spec);
  }
  updates_ = r.updates;
  if (r.instances != 0) Resize(r.instances);
}

records::JobRecord Job::ToRecord() const {
  records::JobRecord r{id_,
                       pool_,
                       *spec_,
                       version_,
                       goal_,
                       origin_.created_at,
                       {},
                       updates_,
                       instances(),
                       origin_.owner.user,
                       origin_.owner.group};
  for (const auto& [version, spec] : old_specs_) r.old_specs.emplace(version, *spec);
  return r;
}

}  // namespace paceline::jobmgr
