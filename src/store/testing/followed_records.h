#pragma once
// Records for tests that follow a store as a standby does (store_mirror.h): a job of one spec,
// its tasks with a run number that also sets their state and host, and the first commit of
// such tests, job 1 with its tasks. Test-only.
//
// Thread-safety: value builders.

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "records/records.h"

namespace paceline::store::testing {

inline JobSpec FollowedSpec(uint32_t instances) {
  JobSpec s;
  s.name = "job";
  s.instances = instances;
  s.task.command = "true";
  s.task.resources = Resources::Of(100, int64_t{16} << 20);
  return s;
}

inline records::JobRecord FollowedJob(uint64_t id, uint64_t version) {
  return records::JobRecord{JobId(id),
                            "/p",
                            FollowedSpec(4),
                            version,
                            records::JobGoal::kRun,
                            absl::FromUnixSeconds(100),
                            {},
                            {},
                            4};
}

inline records::TaskRecord FollowedTask(uint64_t job, uint32_t instance, uint32_t run) {
  records::TaskRecord t;
  t.id = TaskId{JobId(job), instance};
  t.run = run;
  t.state = run % 2 == 0 ? TaskState::kRunning : TaskState::kSucceeded;
  t.host = "h" + std::to_string(run % 3);
  t.started_at = absl::FromUnixSeconds(run);
  return t;
}

// Job 1 with `tasks` tasks of its first run, and the next job id after it.
inline records::WriteBatch JobWithTasks(uint32_t tasks) {
  records::WriteBatch b;
  b.put_jobs.push_back(FollowedJob(1, 1));
  for (uint32_t i = 0; i < tasks; ++i) b.put_tasks.push_back(FollowedTask(1, i, 1));
  b.next_job_id = 2;
  return b;
}

}  // namespace paceline::store::testing
