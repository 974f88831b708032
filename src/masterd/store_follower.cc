#include "masterd/store_follower.h"

#include <iostream>
#include <memory>
#include <utility>

#include "absl/time/clock.h"

namespace paceline::masterd {

namespace {
constexpr absl::Duration kFollowEvery = absl::Milliseconds(500);
}  // namespace

StoreFollower::StoreFollower(store::GroupCommitter* committer, EventLoop* loop,
                             ChangesFn on_changes)
    : committer_(committer), loop_(loop), on_changes_(std::move(on_changes)) {}

void StoreFollower::Follow() {
  if (!followable_ || following_ || absl::Now() < next_follow_) return;
  following_ = true;
  next_follow_ = absl::Now() + kFollowEvery;
  // Read on the writer thread (a standby commits nothing), applied on the loop.
  committer_->SubmitRead([this, since = mirror_.rev(), generation = generation_](store::Store& s) {
    const absl::Time snapshot = absl::Now();
    auto changes = std::make_shared<absl::StatusOr<store::StoreChanges>>(s.ReadChanges(since));
    // Compacted past this copy (store/postgres/change_compaction.h): read the store whole.
    const bool whole = !changes->ok() && changes->status().code() == absl::StatusCode::kOutOfRange;
    if (whole) *changes = s.ReadChanges(store::kNoRevision);
    loop_->Post([this, changes, generation, snapshot, whole] {
      following_ = false;
      if (generation != generation_) return;  // taken over meanwhile
      if (!changes->ok()) {
        if (changes->status().code() == absl::StatusCode::kUnimplemented) followable_ = false;
        if (changes->status() != follow_error_) {
          std::cerr << "master: following the store failed: " << changes->status().message()
                    << std::endl;
        }
        follow_error_ = changes->status();
        return;
      }
      follow_error_ = absl::OkStatus();
      if (on_changes_) on_changes_(**changes);
      if (whole) {
        std::cerr << "master: this standby's copy was older than the changes the store keeps; "
                     "it read the store whole ("
                  << (*changes)->rows() << " rows)" << std::endl;
        mirror_ = store::StoreMirror{};
      }
      mirror_.Apply(*std::move(*changes));
      absl::MutexLock lock(&mu_);
      followed_at_ = snapshot;
    });
  });
}

store::StoreMirror StoreFollower::Take() {
  ++generation_;  // a read of changes still in flight is not applied
  store::StoreMirror mirror = std::exchange(mirror_, store::StoreMirror{});
  absl::MutexLock lock(&mu_);
  followed_at_ = absl::InfinitePast();
  return mirror;
}

absl::Duration StoreFollower::Lag() const {
  absl::MutexLock lock(&mu_);
  if (followed_at_ == absl::InfinitePast()) return absl::InfiniteDuration();
  return absl::Now() - followed_at_;
}

}  // namespace paceline::masterd
