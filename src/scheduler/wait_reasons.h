#pragma once
// WaitReasons: why each waiting task is not placed yet, in one line each — what the placement
// engine explained, what the resource manager refused, a placement that raced, an adoption that
// could not be accounted. Part of the core's "why pending" (SchedulerCore::WhyPending), which
// falls back on the resource manager's queue and the task's backoff when a task has none here.
//
// Thread-safety: single-threaded, part of the core.

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "common/ids.h"

namespace paceline::scheduler {

class WaitReasons {
 public:
  void Set(TaskId task, std::string why) { why_[task] = std::move(why); }
  void Erase(TaskId task) { why_.erase(task); }
  // The task's reason; nullptr when it has none.
  const std::string* Find(TaskId task) const;
  // Drops the reasons of the tasks of `jobs` (deleted).
  void ForgetJobs(const absl::flat_hash_set<JobId>& jobs);

 private:
  absl::flat_hash_map<TaskId, std::string> why_;
};

}  // namespace paceline::scheduler
