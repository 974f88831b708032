// SchedulerCore: daemon jobs — one instance on every UP, connected host whose labels satisfy the
// job's label constraints (see scheduler_core.h).
//
// Each instance is pinned to one host (placement requires that host). When hosts join, come
// back up or leave (lost, draining, down), the next cycle reconciles: a host without an
// instance gets one (reusing an ended instance's slot, else a new instance), and an instance
// whose host is no longer eligible is stopped (it stays KILLED; its slot may be reused).

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "placement/filters/labels_filter.h"
#include "scheduler/scheduler_core.h"

namespace paceline::scheduler {
namespace {

std::optional<absl::string_view> LabelOf(
    const std::vector<std::pair<std::string, std::string>>& labels, const std::string& key) {
  for (const auto& [k, v] : labels) {
    if (k == key) return v;
  }
  return std::nullopt;
}

bool Eligible(const TaskSpec& task, const TrackedHost& h) {
  if (!h.connected || h.maintenance != records::HostMaintenance::kUp) return false;
  for (const Constraint& c : task.constraints) {
    const auto* label = std::get_if<LabelConstraint>(&c);
    if (label != nullptr &&
        !placement::LabelConstraintHolds(*label, LabelOf(h.spec.labels, label->label))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<HostId> SchedulerCore::DaemonHostOf(TaskId task) const {
  auto pin = daemon_pins_.find(task);
  if (pin != daemon_pins_.end()) return pin->second;
  const jobmgr::Job* job = jobs_.GetJob(task.job);
  if (job == nullptr || job->task(task.instance).host == jobmgr::kNoHost) return std::nullopt;
  const TrackedHost* h = hosts_.Find(jobs_.HostName(job->task(task.instance).host));
  return h != nullptr ? std::optional<HostId>(h->id) : std::nullopt;
}

void SchedulerCore::ReconcileDaemons(absl::Time now, Actions& out) {
  if (!daemons_dirty_) return;
  daemons_dirty_ = false;
  for (JobId id : daemon_jobs_) {
    const jobmgr::Job* job = jobs_.GetJob(id);
    if (job == nullptr || job->goal() == records::JobGoal::kKill) continue;
    TaskSpec task = job->spec().task;
    std::vector<HostId> eligible;
    for (const TrackedHost& h : hosts_.all()) {
      if (Eligible(task, h)) eligible.push_back(h.id);
    }
    absl::flat_hash_set<HostId> wanted(eligible.begin(), eligible.end());
    absl::flat_hash_set<HostId> covered;
    std::vector<uint32_t> ended, unpinned;
    jobmgr::Effects fx;
    for (uint32_t i = 0; i < job->instances(); ++i) {
      TaskId t{id, i};
      if (IsTerminal(job->task(i).state)) {
        daemon_pins_.erase(t);
        ended.push_back(i);
        continue;
      }
      std::optional<HostId> host = DaemonHostOf(t);
      if (!host) {
        unpinned.push_back(i);
      } else if (!wanted.contains(*host) || !covered.insert(*host).second) {
        daemon_pins_.erase(t);
        jobs_.StopInstance(t, jobmgr::TaskReason::kHostLeft, now, fx);
      }
    }
    uint32_t added = 0;
    for (HostId h : eligible) {
      if (covered.contains(h)) continue;
      uint32_t i = 0;
      if (!unpinned.empty()) {
        i = unpinned.back();
        unpinned.pop_back();
      } else if (!ended.empty()) {
        i = ended.front();
        ended.erase(ended.begin());
        jobs_.RerunInstance(TaskId{id, i}, now, fx);
      } else {
        i = job->instances() + added++;
      }
      daemon_pins_[TaskId{id, i}] = h;
    }
    for (uint32_t i : unpinned)
      jobs_.StopInstance(TaskId{id, i}, jobmgr::TaskReason::kScaledDown, now, fx);
    if (added > 0) jobs_.AddInstances(id, added, now, fx);
    Absorb(fx, now, out);
  }
}

}  // namespace paceline::scheduler
