#include "scheduler/wait_reasons.h"

namespace paceline::scheduler {

const std::string* WaitReasons::Find(TaskId task) const {
  auto it = why_.find(task);
  return it == why_.end() ? nullptr : &it->second;
}

void WaitReasons::ForgetJobs(const absl::flat_hash_set<JobId>& jobs) {
  for (auto it = why_.begin(); it != why_.end();) {
    if (jobs.contains(it->first.job)) {
      why_.erase(it++);
    } else {
      ++it;
    }
  }
}

}  // namespace paceline::scheduler
