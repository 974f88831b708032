#pragma once
// BatchCoalescer: many write batches made into one, so that the changes of one turn of the
// master's loop (a cycle's launches, hundreds of hosts' status reports, new jobs) are one batch
// of the group committer instead of hundreds. The result is what committing the batches one
// after the other would leave, in one atomic batch:
//   - a record put twice (a job, a task, a host) is put once, with its last value, where it
//     was first put (a store sees each key once per batch: records.h);
//   - events, audit records and usage to add keep their order; the job id counter takes the
//     last value.
// Only batches that delete nothing may be merged (Mergeable): a WriteBatch applies its puts
// before its deletes whatever their order, so a put after a delete of the same key would be
// lost. Such batches (and those that touch pools, tokens, secrets or the cluster's id) go alone.
//
// Thread-safety: a value type.

#include <string>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "records/records.h"

namespace paceline::records {

class BatchCoalescer {
 public:
  // Whether `batch` may be merged with others: it only puts jobs, tasks and hosts, appends
  // events, adds usage, and moves the job id counter.
  static bool Mergeable(const WriteBatch& batch);

  // Requires Mergeable(batch).
  void Add(WriteBatch batch);
  bool empty() const { return batch_.empty(); }
  size_t batches() const { return batches_; }
  // The merged batch; the coalescer is empty again.
  WriteBatch Take();

 private:
  WriteBatch batch_;
  size_t batches_ = 0;
  absl::flat_hash_map<JobId, size_t> job_at_;  // index in batch_.put_jobs
  absl::flat_hash_map<TaskId, size_t> task_at_;
  absl::flat_hash_map<std::string, size_t> host_at_;
};

}  // namespace paceline::records
