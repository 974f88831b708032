#pragma once
// FollowedReads: what a standby answers reads from (docs/operations.md "Reads on standbys"): a
// read-only scheduler core built from the StoreFollower's mirror the way a restart builds one
// from the store. It is built again when the mirror has moved on: at once when a call needs a
// revision it does not reflect yet (read-your-writes), otherwise at most once every
// max(kMinRebuildGap, 4 × the last build's time), so that on a large cluster rebuilding takes at
// most a fifth of the standby's loop.
//
// The core never schedules, commits or dispatches: what Restore would write is dropped, and it
// says of a pending task that the leader knows why it waits (SchedulerCore::MarkFollower).
//
// Thread-safety: loop thread only.

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/scheduler_core.h"
#include "store/store_mirror.h"

namespace paceline::masterd {

class FollowedReads {
 public:
  static constexpr absl::Duration kMinRebuildGap = absl::Milliseconds(100);

  explicit FollowedReads(scheduler::CoreConfig config) : config_(std::move(config)) {}

  // Makes the read core reflect at least revision `at_least` (the mirror must have reached it;
  // store::kNoRevision: any) and, unless rebuilt too recently, the mirror's newest state.
  // Returns the revision the core reflects; an error when it cannot be built (the old core, if
  // any, is kept for the next try).
  absl::StatusOr<int64_t> Refresh(const store::StoreMirror& mirror, int64_t at_least,
                                  absl::Time now);
  // The read core; null before a Refresh succeeded or after Clear.
  const scheduler::SchedulerCore* core() const { return core_.get(); }
  // Forgets the read core (the master leads: it serves from its own).
  void Clear();

 private:
  const scheduler::CoreConfig config_;
  std::unique_ptr<scheduler::SchedulerCore> core_;
  int64_t rev_ = store::kNoRevision;
  absl::Time next_rebuild_ = absl::InfinitePast();
};

}  // namespace paceline::masterd
