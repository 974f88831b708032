#include "hostmgr/maintenance.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "jobmgr/serving.h"

namespace paceline::hostmgr {
namespace {

using records::HostMaintenance;

// Running and serving: healthy, and ready (jobmgr/serving.h).
bool Available(const jobmgr::Job& job, uint32_t i) { return jobmgr::Serving(job.task(i)); }

}  // namespace

placement::HostStatus StatusOf(HostMaintenance m) {
  switch (m) {
    case HostMaintenance::kUp:
      return placement::HostStatus::kUp;
    case HostMaintenance::kDraining:
      return placement::HostStatus::kDraining;
    case HostMaintenance::kDrained:
      return placement::HostStatus::kDrained;
    case HostMaintenance::kDown:
      return placement::HostStatus::kDown;
  }
  return placement::HostStatus::kDown;
}

records::HostRecord RecordOf(const TrackedHost& h) {
  records::HostRecord record;
  record.name = h.spec.name;
  record.maintenance = h.maintenance;
  record.capacity = h.spec.capacity;
  for (const auto& [k, v] : h.spec.labels) record.labels[k] = v;
  record.address = h.address;
  return record;
}

absl::StatusOr<bool> CheckTransition(const TrackedHost& h, HostMaintenance next,
                                     const jobmgr::JobManager& jobs) {
  const std::string& name = h.spec.name;
  HostMaintenance cur = h.maintenance;
  if (next == HostMaintenance::kDraining && cur == HostMaintenance::kDown) {
    return absl::FailedPreconditionError(
        absl::StrCat("host ", name, " is DOWN; bring it up first (paceline host up ", name, ")"));
  }
  if (next == HostMaintenance::kDraining && cur == HostMaintenance::kDrained) {
    return false;  // drained already
  }
  if (next == HostMaintenance::kDown && cur != HostMaintenance::kDrained &&
      cur != HostMaintenance::kDown) {
    size_t live = jobs.LiveRunsOnHost(name).size();
    return absl::FailedPreconditionError(absl::StrCat(
        "host ", name, " is ", cur == HostMaintenance::kUp ? "UP" : "DRAINING", " with ", live,
        " live tasks; drain it first (paceline host drain ", name, ") and wait for DRAINED"));
  }
  return cur != next;
}

bool DrainStep(const TrackedHost& h, jobmgr::JobManager& jobs, absl::Time now,
               jobmgr::Effects& fx) {
  std::vector<RunId> runs = jobs.LiveRunsOnHost(h.spec.name);
  if (runs.empty()) return true;
  std::string why = absl::StrCat("host ", h.spec.name, " is draining");
  // Unavailable instances per long-running job, counted once and kept up to date.
  absl::flat_hash_map<JobId, uint32_t> unavailable;
  for (const RunId& run : runs) {
    const jobmgr::Job* job = jobs.GetJob(run.task.job);
    if (job == nullptr) continue;
    TaskState state = job->task(run.task.instance).state;
    if (state == TaskState::kKilling || state == TaskState::kPreempting) continue;
    switch (job->spec().type) {
      case JobType::kBatch:
        jobs.instances().Preempt(run.task, why, now, fx, jobmgr::TaskReason::kHostDraining);
        break;
      case JobType::kDaemon:
        jobs.instances().Stop(run.task, jobmgr::TaskReason::kHostLeft, now, fx);
        break;
      default: {
        auto [it, first] = unavailable.try_emplace(job->id(), 0);
        if (first) {
          for (uint32_t i = 0; i < job->instances(); ++i) it->second += !Available(*job, i);
        }
        uint32_t budget = std::max<uint32_t>(1, job->spec().sla.max_unavailable_instances);
        if (it->second >= budget) continue;
        if (Available(*job, run.task.instance)) ++it->second;
        jobs.instances().Preempt(run.task, why, now, fx, jobmgr::TaskReason::kHostDraining);
        break;
      }
    }
  }
  return false;
}

}  // namespace paceline::hostmgr
