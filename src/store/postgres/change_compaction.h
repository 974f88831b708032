#pragma once
// ChangeCompaction: when the leader trims the change feed that standbys follow (task_changes
// and deletions, schema.h: a row per commit that writes tasks, one per deletion). The leader's
// store notes the revision it has committed (Note), at most once every `sample`; once a noted
// revision is `kept` old, Due() returns it, once: the next commit deletes the changes older than
// it (each table's newest row stays, so the store's newest revision does not move back) and
// records it as `changes_from` in meta. A standby whose copy is older than that cannot be
// brought up to date by changes and reads the store whole again (PostgresStore::ReadChanges
// answers OUT_OF_RANGE; masterd/store_follower.h).
//
// Pure: time is an argument. Thread-safety: none (the store's writer thread).

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "absl/time/time.h"

namespace paceline::store::pg {

class ChangeCompaction {
 public:
  ChangeCompaction(absl::Duration kept, absl::Duration sample) : kept_(kept), sample_(sample) {}

  // `committed` is the newest revision committed at `now`.
  void Note(absl::Time now, int64_t committed) {
    if (!noted_.empty() && now - noted_.back().first < sample_) return;
    if (!noted_.empty() && committed <= noted_.back().second) return;
    noted_.emplace_back(now, committed);
  }
  // The revision below which changes may go, when one came of age since the last call.
  std::optional<int64_t> Due(absl::Time now) {
    std::optional<int64_t> due;
    while (!noted_.empty() && now - noted_.front().first >= kept_) {
      due = noted_.front().second;
      noted_.pop_front();
    }
    return due;
  }

 private:
  const absl::Duration kept_;
  const absl::Duration sample_;
  std::deque<std::pair<absl::Time, int64_t>> noted_;  // oldest first
};

}  // namespace paceline::store::pg
