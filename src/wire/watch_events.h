#pragma once
// The watch events of one batch of changes (JobService.Watch): one InstanceEvent per task
// transition in the batch, then one JobChange per job the batch touched whose derived state or
// spec version differs from the one last published (a deleted job reports DELETED): an
// update's start is an event, so that a watcher knows to read the job again.
//
// Called on the loop thread right after the core produced the batch, so the job states match
// what the batch makes durable; the events are published only once the batch is committed.
//
// Thread-safety: not thread-safe; the caller owns `last_published`.

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/task_state.h"
#include "jobmgr/job_manager.h"
#include "paceline/v1/job.pb.h"
#include "records/records.h"

namespace paceline::wire {

// One stored task event as the API shows it.
v1::TaskEvent ToProto(const records::TaskEvent& e);

// What was last published of each job: its state and version.
using PublishedJobStates = absl::flat_hash_map<JobId, std::pair<JobState, uint64_t>>;

std::vector<v1::WatchEvent> WatchEventsOf(const records::WriteBatch& batch,
                                          const jobmgr::JobManager& jobs, absl::Time now,
                                          PublishedJobStates& last_published);

// A job's current state as a JobChange event.
v1::WatchEvent JobChangeOf(const jobmgr::Job& job, absl::Time now);

}  // namespace paceline::wire
