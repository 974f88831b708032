#pragma once
// MutableJob: one job's state (JobData) and the changes the job manager makes to it, which keep
// the per-state and per-health counts and the spec versions consistent with the tasks. It hands
// out its read-only Job (view()) to everyone else. Only jobmgr/ holds MutableJobs: the
// JobManager's JobTable owns them, and the job manager's parts (TaskLifecycle, InstanceControl,
// RollingUpdates) change them.
//
// Thread-safety: single-threaded (owned by the JobManager on the master's event loop).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/ids.h"
#include "jobmgr/job.h"
#include "records/records.h"
#include "spec/job_spec.h"

namespace paceline::jobmgr {

class MutableJob {
 public:
  MutableJob(JobId id, std::string pool, std::shared_ptr<const JobSpec> spec, uint64_t version,
             records::JobGoal goal, JobOrigin origin);
  MutableJob(const MutableJob&) = delete;
  MutableJob& operator=(const MutableJob&) = delete;

  // The job as everyone reads it.
  const Job& view() const { return view_; }

  std::shared_ptr<const JobSpec> SharedSpecOf(uint64_t version) const {
    return jobmgr::SharedSpecOf(data_, version);
  }
  // A new current spec and version; the old one is kept while any run uses it (see Prune).
  void SetSpec(std::shared_ptr<const JobSpec> spec, uint64_t version);
  // Keeps the earlier specs that a run or a pending update uses, plus the latest `keep` others
  // (for `job rollback --to`); forgets the rest.
  void PruneOldSpecs(size_t keep);
  const std::map<uint64_t, std::shared_ptr<const JobSpec>>& old_specs() const {
    return data_.old_specs;
  }
  // Grows (new instances PENDING on the current version; one removed before continues its run
  // numbers) or shrinks (the caller has ended the instances it removes; their last runs are
  // kept in JobData::retired_runs) the job to `n` instances.
  void Resize(uint32_t n);
  // A removed instance's last run, from its stored task record (restore).
  void NoteRetired(uint32_t instance, uint32_t run);
  std::vector<records::UpdateRecord>& mutable_updates() { return data_.updates; }
  records::UpdateRecord* active_update() {
    return !data_.updates.empty() && records::IsActive(data_.updates.back().state)
               ? &data_.updates.back()
               : nullptr;
  }
  void set_goal(records::JobGoal g) { data_.goal = g; }
  // Mutable access for everything except the state (use SetState, which keeps counts).
  TaskRuntime& mutable_task(uint32_t instance) { return data_.tasks[instance]; }
  void SetState(uint32_t instance, TaskState s);
  // Sets an instance's health, keeping the per-health counts.
  void SetHealth(uint32_t instance, TaskHealth h);
  records::JobRecord ToRecord() const;
  // After construction from a record: its earlier versions, updates and instance count.
  void RestoreHistory(const records::JobRecord& r);

 private:
  JobData data_;
  Job view_{data_};
};

}  // namespace paceline::jobmgr
