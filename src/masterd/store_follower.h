#pragma once
// StoreFollower: a standby's warm copy of the store. Every kFollowEvery at most (Follow, called
// each tick while the master does not lead) it reads, on the store's writer thread, what the
// leader committed since the revision it last saw (Store::ReadChanges), and applies it on the
// loop to a StoreMirror (store/store_mirror.h). Taking over then needs only the changes since
// that revision (Take): the CoreKeeper builds the core from the mirror instead of reading the
// whole store.
//
// A read begun before Take() is discarded when it completes. A store that cannot be followed
// (UNIMPLEMENTED) is not asked again; a failed read is logged once and retried. When the store
// no longer keeps the changes since the mirror's revision (OUT_OF_RANGE: it compacted them,
// store/postgres/change_compaction.h), the read takes the store whole and the mirror starts
// over from it (on_changes sees that read, with the old mirror).
//
// Thread-safety: Follow and Take on the loop thread only; Lag from any thread.

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "masterd/event_loop.h"
#include "store/group_commit.h"
#include "store/store_mirror.h"

namespace paceline::masterd {

class StoreFollower {
 public:
  // Called on the loop with each read's changes, before the mirror applies them.
  using ChangesFn = std::function<void(const store::StoreChanges&)>;
  // `committer` and `loop` must outlive this object.
  StoreFollower(store::GroupCommitter* committer, EventLoop* loop, ChangesFn on_changes);

  // Reads the changes since the mirror's revision, every kFollowEvery at most, without blocking
  // the loop.
  void Follow();
  // Lets the next Follow read at once (a caller waits for a newer revision).
  void FollowSoon() { next_follow_ = absl::InfinitePast(); }
  // The followed state (empty, rev() kNoRevision, when nothing was followed); following starts
  // over from nothing.
  store::StoreMirror Take();
  // The followed state as it is (loop thread).
  const store::StoreMirror& mirror() const { return mirror_; }
  // How old the followed state is (since the snapshot of its last successful read);
  // InfiniteDuration when nothing is followed.
  absl::Duration Lag() const;

 private:
  store::GroupCommitter* const committer_;
  EventLoop* const loop_;
  const ChangesFn on_changes_;
  // Loop thread only: the followed state; a read of changes in flight; when to read next; the
  // generation, bumped when the mirror is taken, so that a read begun before is discarded;
  // whether the store can be followed at all; the last failed read, logged once.
  store::StoreMirror mirror_;
  bool following_ = false;
  absl::Time next_follow_ = absl::InfinitePast();
  uint64_t generation_ = 0;
  bool followable_ = true;
  absl::Status follow_error_;
  // When the snapshot of the mirror's last successful read was taken.
  mutable absl::Mutex mu_;
  absl::Time followed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace paceline::masterd
