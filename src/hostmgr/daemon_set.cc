#include "hostmgr/daemon_set.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "placement/filters/labels_filter.h"

namespace paceline::hostmgr {
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

void DaemonSet::Remove(JobId job) {
  jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), job), jobs_.end());
}

std::optional<HostId> DaemonSet::HostOf(TaskId task, const jobmgr::JobManager& jobs,
                                        const HostTracker& hosts) const {
  auto pin = pins_.find(task);
  if (pin != pins_.end()) return pin->second;
  const jobmgr::Job* job = jobs.GetJob(task.job);
  if (job == nullptr || job->task(task.instance).host == jobmgr::kNoHost) return std::nullopt;
  const TrackedHost* h = hosts.Find(jobs.HostName(job->task(task.instance).host));
  return h != nullptr ? std::optional<HostId>(h->id) : std::nullopt;
}

void DaemonSet::Reconcile(const HostTracker& hosts, jobmgr::JobManager& jobs, absl::Time now,
                          jobmgr::Effects& fx) {
  if (!dirty_) return;
  dirty_ = false;
  for (JobId id : jobs_) {
    const jobmgr::Job* job = jobs.GetJob(id);
    if (job == nullptr || job->goal() == records::JobGoal::kKill) continue;
    TaskSpec task = job->spec().task;
    std::vector<HostId> eligible;
    for (const TrackedHost& h : hosts.all()) {
      if (Eligible(task, h)) eligible.push_back(h.id);
    }
    absl::flat_hash_set<HostId> wanted(eligible.begin(), eligible.end());
    absl::flat_hash_set<HostId> covered;
    std::vector<uint32_t> ended, unpinned;
    for (uint32_t i = 0; i < job->instances(); ++i) {
      TaskId t{id, i};
      if (IsTerminal(job->task(i).state)) {
        pins_.erase(t);
        ended.push_back(i);
        continue;
      }
      std::optional<HostId> host = HostOf(t, jobs, hosts);
      if (!host) {
        unpinned.push_back(i);
      } else if (!wanted.contains(*host) || !covered.insert(*host).second) {
        pins_.erase(t);
        jobs.instances().Stop(t, jobmgr::TaskReason::kHostLeft, now, fx);
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
        jobs.instances().Rerun(TaskId{id, i}, now, fx);
      } else {
        i = job->instances() + added++;
      }
      pins_[TaskId{id, i}] = h;
    }
    for (uint32_t i : unpinned)
      jobs.instances().Stop(TaskId{id, i}, jobmgr::TaskReason::kScaledDown, now, fx);
    if (added > 0) jobs.instances().Add(id, added, now, fx);
  }
}

}  // namespace paceline::hostmgr
