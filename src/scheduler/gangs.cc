#include "scheduler/gangs.h"

#include <algorithm>
#include <string>

namespace paceline::scheduler {

void Gangs::Enqueue(const std::vector<TaskId>& tasks, absl::Time now) {
  size_t i = 0;
  while (i < tasks.size()) {
    const jobmgr::Job* job = jobs_.GetJob(tasks[i].job);
    if (job == nullptr) {
      ++i;
      continue;
    }
    const JobSpec& spec = job->spec();
    uint32_t size = std::max<uint32_t>(1, spec.sla.min_running_instances);
    // A gang: up to `size` consecutive instances of the same job, within one multiple of
    // `size` (instances 0..size-1, size..2*size-1, ...), so that a gang is always the same
    // instances, whichever of them are enqueued together.
    size_t j = i + 1;
    while (j < tasks.size() && j - i < size && tasks[j].job == tasks[i].job &&
           tasks[j].instance == tasks[j - 1].instance + 1 &&
           tasks[j].instance / size == tasks[i].instance / size) {
      ++j;
    }
    absl::Span<const TaskId> members(&tasks[i], j - i);
    absl::Status s = rm_.Enqueue(RequestOf(*job, members, next_++), now);
    if (!s.ok()) {
      for (const TaskId& t : members) why_.Set(t, std::string(s.message()));
    }
    i = j;
  }
}

absl::Status Gangs::Adopt(const jobmgr::Job& job, TaskId task, absl::Time now) {
  return rm_.Adopt(RequestOf(job, {task}, next_++), now);
}

resmgr::GangRequest Gangs::RequestOf(const jobmgr::Job& job, absl::Span<const TaskId> tasks,
                                     uint64_t gid) const {
  const JobSpec& spec = job.spec();
  resmgr::GangRequest req;
  req.id = resmgr::GangId(gid);
  req.job = job.id();
  req.pool = *rm_.tree().Find(job.pool());
  req.priority = spec.priority;
  req.sla = resmgr::SlaClassOf(spec.sla);
  req.max_running_instances = spec.sla.max_running_instances;
  req.max_running_time = spec.sla.max_running_time;
  req.expected_running_time = spec.sla.expected_running_time;
  for (const TaskId& t : tasks) {
    const std::shared_ptr<const TaskSpec> task = job.TaskFor(t.instance);
    req.controller = req.controller || task->controller;
    req.tasks.push_back({t, task->resources});
  }
  return req;
}

}  // namespace paceline::scheduler
