#pragma once
// Following a store that another master writes (a warm standby, docs/operations.md "High
// availability").
//
// StoreChanges is what changed in a store after a revision: every pool, job, task, host, token
// and secret row written since (as it is now), what was deleted since (pools, jobs, tasks and
// secrets), and the counters. Tokens are never deleted; audit records are not followed (a
// standby reads them from the store itself). A backend shared by several masters numbers its
// commits (revisions); Store::ReadChanges(since) reads the changes after `since` in one
// consistent snapshot (kNoRevision: everything, like Load()).
//
// StoreMirror keeps a copy of the store's contents up to date from successive StoreChanges, so
// that a standby that takes over builds its state from memory after reading only the last few
// changes, instead of reading the whole store.
//
// Contract of Apply(changes):
//   - `changes.rev` is the newest revision the changes include; the mirror's rev() becomes it.
//   - Deletions are applied before the rows: a row present in the changes exists in the store
//     now, even if a deletion of the same key (an instance removed, then added again) is in the
//     same changes. Deleting a job deletes its tasks.
//   - Contents() (and TakeContents()) return what Load() would: pools by path, jobs by id, tasks
//     by (job, instance), hosts by name, tokens by id, secrets by path, with the counters of the
//     last changes applied.
//
// Thread-safety: a value type; not thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "records/records.h"

namespace paceline::store {

// The revision before every commit: ReadChanges(kNoRevision) reads the whole store.
inline constexpr int64_t kNoRevision = -1;

struct StoreChanges {
  int64_t rev = kNoRevision;       // the newest revision included
  records::StoreContents changed;  // rows written after `since`, and the counters now
  std::vector<std::string> deleted_pools;
  std::vector<JobId> deleted_jobs;  // with their tasks
  std::vector<TaskId> deleted_tasks;
  std::vector<std::string> deleted_secrets;  // by path

  size_t rows() const {
    return changed.pools.size() + changed.jobs.size() + changed.tasks.size() +
           changed.hosts.size() + changed.tokens.size() + changed.secrets.size() +
           deleted_pools.size() + deleted_jobs.size() + deleted_tasks.size() +
           deleted_secrets.size();
  }
};

class StoreMirror {
 public:
  void Apply(StoreChanges changes);
  records::StoreContents Contents() const;
  // Contents(), moved out of a mirror that is not used afterwards.
  records::StoreContents TakeContents() &&;
  int64_t rev() const { return rev_; }
  size_t tasks() const { return tasks_.size(); }
  // The rows as they are now, without a copy (a standby's DNS, masterd/followed_endpoints.h).
  const std::map<JobId, records::JobRecord>& job_records() const { return jobs_; }
  const std::map<TaskId, records::TaskRecord>& task_records() const { return tasks_; }
  const std::map<std::string, records::HostRecord>& host_records() const { return hosts_; }

 private:
  int64_t rev_ = kNoRevision;
  std::map<std::string, records::PoolRecord> pools_;
  std::map<JobId, records::JobRecord> jobs_;
  std::map<TaskId, records::TaskRecord> tasks_;
  std::map<std::string, records::HostRecord> hosts_;
  std::map<std::string, records::TokenRecord> tokens_;
  std::map<std::string, records::SecretRecord> secrets_;
  uint64_t next_job_id_ = 1;
  std::string cluster_id_;
};

}  // namespace paceline::store
