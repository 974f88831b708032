#include "jobmgr/job_table.h"

#include <utility>

namespace paceline::jobmgr {

void JobTable::Put(std::unique_ptr<MutableJob> job) {
  JobId id = job->view().id();
  jobs_[id] = std::move(job);
  ids_.insert(id);
}

void JobTable::Erase(JobId id) {
  jobs_.erase(id);
  ids_.erase(id);
}

MutableJob* JobTable::Find(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

const Job* JobTable::Get(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second->view();
}

}  // namespace paceline::jobmgr
