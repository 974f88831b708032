// SchedulerCore: host maintenance — drain, down, up (see scheduler_core.h).
//
//   UP ──drain──> DRAINING ──(no live task left)──> DRAINED ──down──> DOWN ──up──> UP
//   (up is allowed from DRAINING and DRAINED too: the host takes work again)
//
// While a host drains, no new task is placed on it; each cycle moves its tasks elsewhere:
// batch tasks at once (killed and rescheduled, reason HOST_DRAINING), instances of long-running
// jobs one job's max_unavailable_instances at a time, counting the job's instances that are
// not available (not RUNNING, or not HEALTHY when checked); daemon instances are stopped.

#include "absl/strings/str_cat.h"
#include "scheduler/scheduler_core.h"

namespace paceline::scheduler {
namespace {

using records::HostMaintenance;

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

bool Available(const jobmgr::Job& job, uint32_t i) {
  const jobmgr::TaskRuntime& t = job.task(i);
  if (t.state != TaskState::kRunning) return false;
  return !job.TaskFor(i).health.has_value() || t.health == jobmgr::TaskHealth::kHealthy;
}

}  // namespace

absl::Status SchedulerCore::SetMaintenance(const std::string& name, HostMaintenance next,
                                           absl::Time now, Actions& out) {
  const TrackedHost* h = hosts_.Find(name);
  if (h == nullptr) return absl::NotFoundError(absl::StrCat("host ", name, " not found"));
  HostMaintenance cur = h->maintenance;
  if (next == HostMaintenance::kDraining && cur == HostMaintenance::kDown) {
    return absl::FailedPreconditionError(
        absl::StrCat("host ", name, " is DOWN; bring it up first (paceline host up ", name, ")"));
  }
  if (next == HostMaintenance::kDraining && cur == HostMaintenance::kDrained) {
    return absl::OkStatus();  // drained already
  }
  if (next == HostMaintenance::kDown && cur != HostMaintenance::kDrained &&
      cur != HostMaintenance::kDown) {
    size_t live = jobs_.LiveRunsOnHost(name).size();
    return absl::FailedPreconditionError(absl::StrCat(
        "host ", name, " is ", cur == HostMaintenance::kUp ? "UP" : "DRAINING", " with ", live,
        " live tasks; drain it first (paceline host drain ", name, ") and wait for DRAINED"));
  }
  if (cur == next) return absl::OkStatus();
  ApplyMaintenance(h->id, next, out);
  daemons_dirty_ = true;
  if (next == HostMaintenance::kDraining) DrainStep(now, out);
  return absl::OkStatus();
}

void SchedulerCore::ApplyMaintenance(HostId id, HostMaintenance m, Actions& out) {
  draining_hosts_ -= hosts_.Get(id).maintenance == HostMaintenance::kDraining;
  draining_hosts_ += m == HostMaintenance::kDraining;
  hosts_.SetMaintenance(id, m);
  const TrackedHost& h = hosts_.Get(id);
  if (h.connected) (void)snapshot_.SetHostStatus(id, StatusOf(m));
  out.batch.put_hosts.push_back(HostRecordOf(h));
}

records::HostRecord SchedulerCore::HostRecordOf(const TrackedHost& h) const {
  records::HostRecord record;
  record.name = h.spec.name;
  record.maintenance = h.maintenance;
  record.capacity = h.spec.capacity;
  for (const auto& [k, v] : h.spec.labels) record.labels[k] = v;
  return record;
}

void SchedulerCore::DrainStep(absl::Time now, Actions& out) {
  for (const TrackedHost& h : hosts_.all()) {
    if (h.maintenance != HostMaintenance::kDraining) continue;
    std::vector<RunId> runs = jobs_.LiveRunsOnHost(h.spec.name);
    if (runs.empty()) {
      ApplyMaintenance(h.id, HostMaintenance::kDrained, out);
      continue;
    }
    jobmgr::Effects fx;
    std::string why = absl::StrCat("host ", h.spec.name, " is draining");
    // Unavailable instances per long-running job, counted once and kept up to date.
    absl::flat_hash_map<JobId, uint32_t> unavailable;
    for (const RunId& run : runs) {
      const jobmgr::Job* job = jobs_.GetJob(run.task.job);
      if (job == nullptr) continue;
      TaskState state = job->task(run.task.instance).state;
      if (state == TaskState::kKilling || state == TaskState::kPreempting) continue;
      switch (job->spec().type) {
        case JobType::kBatch:
          jobs_.Preempt(run.task, why, now, fx, jobmgr::TaskReason::kHostDraining);
          break;
        case JobType::kDaemon:
          jobs_.StopInstance(run.task, jobmgr::TaskReason::kHostLeft, now, fx);
          break;
        default: {
          auto [it, first] = unavailable.try_emplace(job->id(), 0);
          if (first) {
            for (uint32_t i = 0; i < job->instances(); ++i) it->second += !Available(*job, i);
          }
          uint32_t budget = std::max<uint32_t>(1, job->spec().sla.max_unavailable_instances);
          if (it->second >= budget) {
            continue;
          }
          if (Available(*job, run.task.instance)) ++it->second;
          jobs_.Preempt(run.task, why, now, fx, jobmgr::TaskReason::kHostDraining);
          break;
        }
      }
    }
    Absorb(fx, now, out);
  }
}

}  // namespace paceline::scheduler
