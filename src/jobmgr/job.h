#pragma once
// Job: one job in the master's memory — its spec (shared by every instance), its goal, and the
// compact runtime state of each instance (TaskRuntime, ~56 bytes) — as everyone reads it: a
// read-only view over its JobData, which its MutableJob owns and changes (mutable_job.h). Per-state
// counts are kept up to date on every change, so the job's derived state and `job get` counts
// cost O(1).
//
// Thread-safety: single-threaded (owned by the JobManager on the master's event loop).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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
std::optional<TaskHealth> TaskHealthFromName(absl::string_view name);

// The readiness of a task's current run (task.readiness, docs/services.md): whether it may take
// traffic. kNone: no readiness check, or no live process; kUnknown: not passed yet.
enum class TaskReadiness : uint8_t { kNone, kUnknown, kReady, kNotReady };
absl::string_view TaskReadinessName(TaskReadiness r);  // "", "UNKNOWN", "READY", "NOT_READY"
std::optional<TaskReadiness> TaskReadinessFromName(absl::string_view name);

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
  TaskReadiness readiness = TaskReadiness::kNone;  // of the current run
  uint32_t spec_version = 0;                       // the job version the current run runs
  uint32_t next_spec_version = 0;  // set by an update: the next run runs this version; 0 = none
  uint32_t volume_host = kNoHost;  // stateful: where the volume is (the instance returns there)
  uint32_t last_host = kNoHost;    // the previous run's host (in-place updates prefer it)
  uint32_t gang_attempt = 0;       // job.gang.restart: gang: its gang's restarts before this run
};

// The state of one job: owned by its MutableJob (mutable_job.h), which alone changes it, and
// read by everyone through the Job over it.
struct JobData {
  JobId id;
  std::string pool;
  std::shared_ptr<const JobSpec> spec;  // the current one
  uint64_t version = 0;
  records::JobGoal goal = records::JobGoal::kRun;
  JobOrigin origin;
  std::vector<TaskRuntime> tasks;
  std::array<uint32_t, kNumTaskStates> counts{};                 // tasks by state
  std::array<uint32_t, kNumTaskHealths> health_counts{};         // tasks by health
  std::map<uint64_t, std::shared_ptr<const JobSpec>> old_specs;  // earlier versions still kept
  std::vector<records::UpdateRecord> updates;
  // Instances a scale-down removed, with the last run each had: one added back continues from
  // there, so that a run's number (job/instance/run) never names two runs (an agent refuses a
  // run it already ran; the audit and the logs name runs by it). Their task records stay in the
  // store, which is where a restart of the master reads them back from.
  std::map<uint32_t, uint32_t> retired_runs;
};

// The spec of `version`, shared: the current one or an earlier one still kept (nullptr if not).
std::shared_ptr<const JobSpec> SharedSpecOf(const JobData& job, uint64_t version);

// A job, read-only. Everyone reads a Job; the job manager changes it through the MutableJob
// that owns its state (mutable_job.h: the jobs' mutations keep the per-state counts and the spec
// versions consistent with the tasks), and hands out only this view.
class Job {
 public:
  explicit Job(const JobData& data) : d_(data) {}
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  JobId id() const { return d_.id; }
  const std::string& pool() const { return d_.pool; }
  records::JobGoal goal() const { return d_.goal; }
  const JobOrigin& origin() const { return d_.origin; }
  // Derived from the tasks' states and the goal (see common/task_state.h); with completion:
  // instance-0 (batch), an ended job's state is instance 0's.
  JobState state() const;

  // The current spec: what new instances and updated ones run.
  const JobSpec& spec() const { return *d_.spec; }
  uint64_t version() const { return d_.version; }
  // The spec of `version`: the current one or an earlier one still kept (nullptr if not kept).
  const JobSpec* SpecOf(uint64_t version) const;
  // The effective task of an instance's current run (its run's spec version, overrides
  // applied): shared with the job's spec (no copy) when the instance has no override.
  std::shared_ptr<const TaskSpec> TaskFor(uint32_t instance) const;
  // Rolling updates, oldest first; the last one may be active.
  const std::vector<records::UpdateRecord>& updates() const { return d_.updates; }

  uint32_t instances() const { return static_cast<uint32_t>(d_.tasks.size()); }
  const TaskRuntime& task(uint32_t instance) const { return d_.tasks[instance]; }
  uint32_t count(TaskState s) const { return d_.counts[static_cast<int>(s)]; }
  // Instances whose current run has health `h` (kNone included).
  uint32_t health_count(TaskHealth h) const { return d_.health_counts[static_cast<int>(h)]; }
  // Live = not terminal (PENDING ... RUNNING, PREEMPTING, KILLING).
  uint32_t live() const;

 private:
  const JobData& d_;
};

// When a run of `job` started at `start` is killed at the latest: `start` + the current spec's
// sla.max_running_time; InfiniteFuture without a limit.
absl::Time DeadlineFrom(const Job& job, absl::Time start);

}  // namespace paceline::jobmgr
