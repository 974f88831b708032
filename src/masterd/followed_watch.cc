#include "masterd/followed_watch.h"

#include <utility>

#include "common/task_state.h"

namespace paceline::masterd {
namespace {

// When a row's run entered its state, as far as the row says.
absl::Time EnteredAt(const records::TaskRecord& t, absl::Time now) {
  if (IsTerminal(t.state) && t.finished_at != absl::InfinitePast()) return t.finished_at;
  if (t.state == TaskState::kRunning && t.started_at != absl::InfinitePast()) return t.started_at;
  return now;
}

}  // namespace

void FollowedWatch::Note(const store::StoreChanges& changes, const store::StoreMirror& mirror,
                         absl::Time now) {
  const auto& before = mirror.task_records();
  for (const records::TaskRecord& t : changes.changed.tasks) {
    auto it = before.find(t.id);
    if (it != before.end() && it->second.state == t.state && it->second.run == t.run) continue;
    batch_.events.push_back(records::TaskEvent{RunId{t.id, t.run}, EnteredAt(t, now), t.state,
                                               t.host, t.reason, t.message});
    batch_.put_tasks.push_back(t);
  }
  const auto& jobs_before = mirror.job_records();
  for (const records::JobRecord& j : changes.changed.jobs) {
    auto it = jobs_before.find(j.id);
    if (it == jobs_before.end() || !(it->second == j)) batch_.put_jobs.push_back(j);
  }
  for (JobId id : changes.deleted_jobs) batch_.delete_jobs.push_back(id);
}

std::vector<v1::WatchEvent> FollowedWatch::Take(const jobmgr::JobManager& jobs, absl::Time now) {
  std::vector<v1::WatchEvent> out = wire::WatchEventsOf(batch_, jobs, now, published_);
  batch_ = records::WriteBatch();
  return out;
}

void FollowedWatch::Clear() {
  batch_ = records::WriteBatch();
  published_.clear();
}

}  // namespace paceline::masterd
