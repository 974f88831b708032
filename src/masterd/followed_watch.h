#pragma once
// FollowedWatch: the events a standby's watchers get (JobService.Watch on a standby,
// docs/operations.md "Reads on standbys"), made from the changes it follows rather than from
// commits of its own:
//   - a task row whose state or run changed is an InstanceEvent of the state it is in now, at
//     the time its row gives (when the run started or ended); the states it went through
//     between two reads of the store, which a leader's watchers see one by one, are not in the
//     rows, so a standby's watchers see only the last;
//   - a job whose state or version changed is a JobChange, taken from the standby's read core
//     once that reflects the changes (wire::WatchEventsOf, as the leader does).
// Nothing is noted while nobody watches.
//
// Thread-safety: loop thread only.

#include <vector>

#include "absl/time/time.h"
#include "jobmgr/job_manager.h"
#include "paceline/v1/job.pb.h"
#include "records/records.h"
#include "store/store_mirror.h"
#include "wire/watch_events.h"

namespace paceline::masterd {

class FollowedWatch {
 public:
  // Notes what `changes` change, before `mirror` applies them.
  void Note(const store::StoreChanges& changes, const store::StoreMirror& mirror, absl::Time now);
  // Whether events wait for Take.
  bool pending() const { return !batch_.empty(); }
  // The noted events, once `jobs` reflect the changes noted; forgets them.
  std::vector<v1::WatchEvent> Take(const jobmgr::JobManager& jobs, absl::Time now);
  // Forgets everything (the master leads: its commits make the events).
  void Clear();

 private:
  records::WriteBatch batch_;  // the noted changes, as the leader's batches carry them
  wire::PublishedJobStates published_;
};

}  // namespace paceline::masterd
