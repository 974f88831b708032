#include "scheduler/retention.h"

#include <algorithm>

#include "records/records.h"
#include "spec/schedule_spec.h"

namespace paceline::scheduler {

bool Retention::Finished(const jobmgr::Job& job) {
  if (job.live() > 0) return false;
  // A cron job's runs are kept by its keep_succeeded and keep_failed (cron_runs.h).
  if (job.spec().labels.contains(std::string(kCronJobLabel))) return false;
  const bool wants_to_run = job.goal() == records::JobGoal::kRun;
  if (wants_to_run && (job.instances() == 0 || job.spec().type == JobType::kDaemon)) return false;
  return job.updates().empty() || !records::IsActive(job.updates().back().state);
}

absl::Time Retention::FinishedAt(const jobmgr::Job& job) {
  absl::Time at = job.origin().created_at;
  for (uint32_t i = 0; i < job.instances(); ++i) {
    const absl::Time f = job.task(i).finished_at;
    if (f != absl::InfinitePast()) at = std::max(at, f);
  }
  return at;
}

void Retention::Update(const jobmgr::Job& job, absl::Time now) {
  const bool finished = Finished(job);
  auto it = entries_.find(job.id());
  if (finished == (it != entries_.end())) return;  // no change: keeps the first finish time
  if (!finished) {
    Forget(job.id());
    return;
  }
  Index(job.id(), Entry{job.pool(), now, absl::InfiniteFuture()});
}

void Retention::Index(JobId job, Entry e) {
  const absl::Duration window = window_(e.pool);
  e.expires_at =
      window == absl::InfiniteDuration() ? absl::InfiniteFuture() : e.finished_at + window;
  if (e.expires_at != absl::InfiniteFuture()) by_expiry_.insert({e.expires_at, job});
  entries_[job] = std::move(e);
}

void Retention::Forget(JobId job) {
  auto it = entries_.find(job);
  if (it == entries_.end()) return;
  by_expiry_.erase({it->second.expires_at, job});
  entries_.erase(it);
}

void Retention::Rewindow() {
  by_expiry_.clear();
  for (auto& [job, e] : entries_) Index(job, e);
}

std::vector<JobId> Retention::Expired(absl::Time now, size_t limit) const {
  std::vector<JobId> out;
  for (auto it = by_expiry_.begin(); it != by_expiry_.end() && out.size() < limit; ++it) {
    if (it->first > now) break;
    out.push_back(it->second);
  }
  return out;
}

bool Retention::IsExpired(JobId job, absl::Time now) const {
  auto it = entries_.find(job);
  return it != entries_.end() && it->second.expires_at <= now;
}

absl::Duration Retention::Lag(absl::Time now) const {
  if (by_expiry_.empty() || by_expiry_.begin()->first > now) return absl::ZeroDuration();
  return now - by_expiry_.begin()->first;
}

}  // namespace paceline::scheduler
