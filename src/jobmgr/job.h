#pragma once
// Job: one job in the master's memory — its spec (shared by every instance), its goal, and the
// compact runtime state of each instance (TaskRuntime, ~56 bytes). Per-state counts are kept up
// to date on every change, so the job's derived state and `job get` counts cost O(1).
//
// Thread-safety: single-threaded (owned by the JobManager on the master's event loop).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/ids.h"
#include "common/packed_time.h"
#include "common/task_state.h"
#include "jobmgr/reasons.h"
#include "records/records.h"
#include "spec/job_spec.h"

namespace paceline::jobmgr {

inline constexpr uint32_t kNoHost = UINT32_MAX;

// The health of a task's current run, as its agent's health check reports it. kNone: the run
// has no health check, or the task has no live process.
enum class TaskHealth : uint8_t { kNone, kUnknown, kHealthy, kUnhealthy };
inline constexpr int kNumTaskHealths = 4;
absl::string_view TaskHealthName(TaskHealth h);  // "", "UNKNOWN", "HEALTHY", "UNHEALTHY"

// Who submitted a job: the user and its group (empty without authentication).
struct JobOwner {
  std::string user;
  std::string group;
};

// When a job was created and by whom.
struct JobOrigin {
  absl::Time created_at = absl::UnixEpoch();
  JobOwner owner;
};

struct TaskRuntime {
  TaskState state = TaskState::kPending;
  TaskReason reason = TaskReason::kCreated;
  uint32_t run = 1;  // the current (or next) run; the first run is 1
  uint32_t failures = 0;
  uint32_t host = kNoHost;  // index in the JobManager's host-name table
  int32_t exit_code = -1;
  int32_t signal = 0;
  // One TaskRuntime per task: PackedTime (8 bytes, the infinite past by default) keeps it at 72.
  PackedTime started_at;
  PackedTime finished_at;
  PackedTime not_before;                  // backoff: earliest start of this run
  bool restart_requested = false;         // a user restart: start a new run when this one ends
  TaskHealth health = TaskHealth::kNone;  // of the current run (use Job::SetHealth)
  uint32_t spec_version = 0;              // the job version the current run runs
  uint32_t next_spec_version = 0;  // set by an update: the next run runs this version; 0 = none
  uint32_t volume_host = kNoHost;  // stateful: where the volume is (the instance returns there)
  uint32_t last_host = kNoHost;    // the previous run's host (in-place updates prefer it)
};

// Everyone reads a Job; only the JobManager and its two views (InstanceControl,
// RollingUpdates) change it, so that the per-state counts and the spec versions stay consistent
// with the tasks.
class Job {
 public:
  Job(JobId id, std::string pool, std::shared_ptr<const JobSpec> spec, uint64_t version,
      records::JobGoal goal, JobOrigin origin);

  JobId id() const { return id_; }
  const std::string& pool() const { return pool_; }
  records::JobGoal goal() const { return goal_; }
  const JobOrigin& origin() const { return origin_; }
  // Derived from the tasks' states and the goal (see common/task_state.h).
  JobState state() const;

  // The current spec: what new instances and updated ones run.
  const JobSpec& spec() const { return *spec_; }
  uint64_t version() const { return version_; }
  // The spec of `version`: the current one or an earlier one still kept (nullptr if not kept).
  const JobSpec* SpecOf(uint64_t version) const;
  // The effective task of an instance's current run (its run's spec version, overrides
  // applied): shared with the job's spec (no copy) when the instance has no override.
  std::shared_ptr<const TaskSpec> TaskFor(uint32_t instance) const;
  // Rolling updates, oldest first; the last one may be active.
  const std::vector<records::UpdateRecord>& updates() const { return updates_; }

  uint32_t instances() const { return static_cast<uint32_t>(tasks_.size()); }
  const TaskRuntime& task(uint32_t instance) const { return tasks_[instance]; }
  uint32_t count(TaskState s) const { return counts_[static_cast<int>(s)]; }
  // Instances whose current run has health `h` (kNone included).
  uint32_t health_count(TaskHealth h) const { return health_counts_[static_cast<int>(h)]; }
  // Live = not terminal (PENDING ... RUNNING, PREEMPTING, KILLING).
  uint32_t live() const;

 private:
  friend class JobManager;
  friend class InstanceControl;
  friend class RollingUpdates;

  const std::shared_ptr<const JobSpec>& shared_spec() const { return spec_; }
  std::shared_ptr<const JobSpec> SharedSpecOf(uint64_t version) const;
  // A new current spec and version; the old one is kept while any run uses it (see Prune).
  void SetSpec(std::shared_ptr<const JobSpec> spec, uint64_t version);
  // Keeps the earlier specs that a run or a pending update uses, plus the latest `keep` others
  // (for `job rollback --to`); forgets the rest.
  void PruneOldSpecs(size_t keep);
  const std::map<uint64_t, std::shared_ptr<const JobSpec>>& old_specs() const { return old_specs_; }
  // Grows (new instances PENDING on the current version) or shrinks (the caller has ended the
  // instances it removes) the job to `n` instances.
  void Resize(uint32_t n);
  std::vector<records::UpdateRecord>& mutable_updates() { return updates_; }
  records::UpdateRecord* active_update() {
    return !updates_.empty() && records::IsActive(updates_.back().state) ? &updates_.back()
                                                                         : nullptr;
  }
  void set_goal(records::JobGoal g) { goal_ = g; }
  // Mutable access for everything except the state (use SetState, which keeps counts).
  TaskRuntime& mutable_task(uint32_t instance) { return tasks_[instance]; }
  void SetState(uint32_t instance, TaskState s);
  // Sets an instance's health, keeping the per-health counts.
  void SetHealth(uint32_t instance, TaskHealth h);
  records::JobRecord ToRecord() const;
  // After construction from a record: its earlier versions, updates and instance count.
  void RestoreHistory(const records::JobRecord& r);

  JobId id_;
  std::string pool_;
  std::shared_ptr<const JobSpec> spec_;
  uint64_t version_;
  records::JobGoal goal_;
  JobOrigin origin_;
  std::vector<TaskRuntime> tasks_;
  std::array<uint32_t, kNumTaskStates> counts_{};
  std::array<uint32_t, kNumTaskHealths> health_counts_{};
  std::map<uint64_t, std::shared_ptr<const JobSpec>> old_specs_;
  std::vector<records::UpdateRecord> updates_;
};

}  // namespace paceline::jobmgr
