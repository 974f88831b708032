#pragma once
// JobTable: the jobs of the job manager, by id — each one's MutableJob (mutable_job.h), owned
// here — and their ids in order, for paging and for a restart's fixed order.
//
// Thread-safety: single-threaded (part of the JobManager).

#include <memory>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "jobmgr/job.h"
#include "jobmgr/mutable_job.h"

namespace paceline::jobmgr {

class JobTable {
 public:
  // Adds (or replaces) the job of `job`'s id.
  void Put(std::unique_ptr<MutableJob> job);
  void Erase(JobId id);
  // nullptr when there is no such job.
  MutableJob* Find(JobId id);
  const Job* Get(JobId id) const;
  // The jobs with an id above `after`, by id, until `fn` returns false: O(visited).
  template <typename Fn>
  void ForEachAfter(JobId after, Fn fn) const {
    for (auto it = ids_.upper_bound(after); it != ids_.end(); ++it) {
      if (!fn(*Get(*it))) return;
    }
  }
  const absl::btree_set<JobId>& ids() const { return ids_; }

 private:
  absl::flat_hash_map<JobId, std::unique_ptr<MutableJob>> jobs_;
  absl::btree_set<JobId> ids_;  // the keys of jobs_, in order
};

}  // namespace paceline::jobmgr
