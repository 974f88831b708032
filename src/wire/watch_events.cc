#include "wire/watch_events.h"

#include <string>

#include "absl/container/btree_set.h"
#include "wire/core.h"

namespace paceline::wire {

v1::TaskEvent ToProto(const records::TaskEvent& e) {
  v1::TaskEvent p;
  p.set_run(e.run.run);
  p.set_at_unix_ms(wire::ToUnixMillis(e.at));
  p.set_state(ToProto(e.state));
  p.set_host(e.host);
  p.set_reason(e.reason);
  p.set_message(e.message);
  return p;
}

v1::WatchEvent JobChangeOf(const jobmgr::Job& job, absl::Time now) {
  v1::WatchEvent e;
  e.set_job_id(job.id().value());
  e.set_at_unix_ms(wire::ToUnixMillis(now));
  v1::JobChange* c = e.mutable_job();
  c->set_state(std::string(JobStateName(job.state())));
  c->set_version(job.version());
  for (int i = 0; i < kNumTaskStates; ++i) {
    uint32_t n = job.count(static_cast<TaskState>(i));
    if (n > 0)
      (*c->mutable_task_counts())[std::string(TaskStateName(static_cast<TaskState>(i)))] = n;
  }
  return e;
}

std::vector<v1::WatchEvent> WatchEventsOf(const records::WriteBatch& batch,
                                          const jobmgr::JobManager& jobs, absl::Time now,
                                          PublishedJobStates& last_published) {
  std::vector<v1::WatchEvent> out;
  out.reserve(batch.events.size() + 1);
  absl::btree_set<JobId> touched;  // ordered: the events come out the same way every time
  for (const records::TaskEvent& te : batch.events) {
    v1::WatchEvent& e = out.emplace_back();
    e.set_job_id(te.run.task.job.value());
    e.set_at_unix_ms(wire::ToUnixMillis(te.at));
    v1::InstanceEvent* ie = e.mutable_task();
    ie->set_instance(te.run.task.instance);
    *ie->mutable_event() = ToProto(te);
    touched.insert(te.run.task.job);
  }
  for (const records::TaskRecord& t : batch.put_tasks) touched.insert(t.id.job);
  for (const records::JobRecord& j : batch.put_jobs) touched.insert(j.id);
  for (JobId id : touched) {
    const jobmgr::Job* job = jobs.GetJob(id);
    if (job == nullptr) continue;  // deleted in the same batch: reported below
    const std::pair<JobState, uint64_t> now_published{job->state(), job->version()};
    auto [it, first] = last_published.try_emplace(id, now_published);
    if (!first && it->second == now_published) continue;
    it->second = now_published;
    out.push_back(JobChangeOf(*job, now));
  }
  for (JobId id : batch.delete_jobs) {
    last_published.erase(id);
    v1::WatchEvent& e = out.emplace_back();
    e.set_job_id(id.value());
    e.set_at_unix_ms(wire::ToUnixMillis(now));
    e.mutable_job()->set_state("DELETED");
  }
  return out;
}

}  // namespace paceline::wire
