#pragma once
// CoreKeeper: the one owner of the scheduler core, and whether the master serves from it.
//
// It builds the core from the store exactly as after a restart: at Start (a master alone), at
// BecomeLeader (a standby that wins the lease: from the StoreFollower's warm copy plus the
// changes since, or the whole store), and after a failed commit. A failed commit leaves memory
// ahead of the store: the keeper refuses changes, closes the watches and the agents' streams
// (they keep their tasks running and resend every unacknowledged update when they connect
// again) and, once a second, tries to reload: it reads the store on the writer thread, rebuilds
// the core from it and serves again. Nothing acknowledged is lost; nothing unacknowledged is
// kept. With led_by_lease the leadership decides instead (masterd/leadership.h): the keeper
// stops serving and follows the store until BecomeLeader. A standby answers reads from what it
// follows (FollowedReads, Admit) and gives its watchers the events of what it follows
// (FollowedWatch).
//
// Thread-safety: Serving, ReplicationLag, ReadFollowed, BecomeLeader and StepDown from any
// thread (the last three block, and must not be called on the loop); core, refusal,
// OnStoreFailure and Recover on the loop thread only; OnRecords and Start before the loop runs.

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/access_control.h"
#include "api/event_hub.h"
#include "masterd/agent_registry.h"
#include "masterd/commit_path.h"
#include "masterd/event_loop.h"
#include "masterd/followed_reads.h"
#include "masterd/followed_watch.h"
#include "masterd/store_follower.h"
#include "records/records.h"
#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace paceline::masterd {

class CoreKeeper {
 public:
  // What the keeper works with; every pointer must outlive it.
  struct Parts {
    store::GroupCommitter* committer;
    EventLoop* loop;
    CommitPath* commits;
    api::EventHub* hub;     // its watches end when the master stops serving
    AgentRegistry* agents;  // their streams end then too
  };
  // `standby_read_bound`: a standby answers the reads it may (api::Gate) from its followed
  // state while that is at most this old; zero: it answers none.
  CoreKeeper(scheduler::CoreConfig core_config, bool led_by_lease, Parts parts,
             absl::Duration standby_read_bound = absl::ZeroDuration());

  // How the records kept beside the core (tokens, secrets) reach their books: `f(records,
  // true)` with every token and secret of the store each time the core is rebuilt from it
  // (start, reload, take-over); a standby calls `f(changes, false)` with those written or
  // deleted since its last read of the store. Set before Start().
  using RecordsFn = std::function<void(const store::StoreChanges&, bool all)>;
  void OnRecords(RecordsFn f) { on_records_ = std::move(f); }
  // Builds the core from the store; a standby (led_by_lease): an empty core that serves nothing.
  absl::Status Start();

  // The core (loop thread).
  scheduler::SchedulerCore& core() { return *core_; }
  // Why changes are refused; OK while they are not (loop thread).
  const absl::Status& refusal() const { return refusal_; }
  // The same, for other threads: OK while this master serves calls; otherwise why not (the
  // API's gate, api/access_control.h).
  absl::Status Serving() const;
  // A standby: how old the followed state is. InfiniteDuration while it leads, or has not
  // followed yet.
  absl::Duration ReplicationLag() const;
  // The API's gate (api::Gate::admit): a serving master serves every call; a standby serves
  // a `followed_read` from its followed state, built to reflect at least revision `at_least`
  // (followed sooner, and waited for up to kRevisionWait), while that state is at most
  // standby_read_bound old. Otherwise why not, naming the leader. Blocks; not on the loop.
  absl::StatusOr<api::AnswerStamp> Admit(bool followed_read, int64_t at_least);
  static constexpr absl::Duration kRevisionWait = absl::Seconds(2);
  // What reads run against (loop thread): the core while serving; a standby's followed state
  // once Admit built it.
  const scheduler::SchedulerCore& ReadCore() const;
  // A standby (led_by_lease, not serving): runs `fn` on the loop with the state it follows (as
  // old as ReplicationLag) and returns true. False, without running `fn`, while this master
  // serves from its core or is a master alone. Blocks; not on the loop.
  bool ReadFollowed(const std::function<void(const store::StoreMirror&)>& fn);

  // Several masters (blocking): runs `fence` on the store's writer thread (it fences every later
  // commit by the new term), then rebuilds from the followed state plus the changes since (or
  // from the whole store, when it has not followed it) and serves.
  absl::Status BecomeLeader(const std::function<void(store::Store&)>& fence);
  // Stops serving with `why` (it carries the leader's address): changes, reads and agent
  // streams are refused with it; the agents' streams are ended.
  void StepDown(const absl::Status& why);

  // A commit failed: stop serving until the core is rebuilt (loop thread).
  void OnStoreFailure(const absl::Status& s);
  // Each tick while refused (loop thread): a standby follows the store; a master alone tries to
  // reload from it.
  void Recover();

 private:
  // Stops serving with `why` and ends the watches and agent streams (loop thread).
  void Refuse(const absl::Status& why);
  void SetRefusal(absl::Status s);
  // Reads the whole store (on the writer thread) while rebuilding from what it has read.
  absl::Status LoadAndRebuild();
  // Reads the store and rebuilds from it, once a second at most, without blocking the loop.
  void TryReload();
  // A standby: publishes the watch events of the changes it followed (FollowedWatch).
  void PublishFollowed();
  // A new core from the store's contents, as after a restart (loop thread, or before it runs).
  // With `more`: the tasks a streaming load hands over after `contents` (store/load_queue.h).
  absl::Status Rebuild(const records::StoreContents& contents,
                       const records::TaskBatches& more = nullptr);
  // BecomeLeader's rebuild: from the mirror and the changes since, or the whole store.
  absl::Status TakeOver();

  const scheduler::CoreConfig core_config_;
  const bool led_by_lease_;
  const Parts parts_;
  RecordsFn on_records_;
  std::unique_ptr<scheduler::SchedulerCore> core_;
  StoreFollower follower_;
  const absl::Duration standby_read_bound_;
  FollowedReads reads_;  // loop thread only
  FollowedWatch watch_;  // loop thread only
  // Loop thread only: why changes are refused (OK: they are not); when to try reloading next;
  // a reload in flight. shared_refusal_ is the copy other threads read (Serving()).
  absl::Status refusal_;
  absl::Time next_reload_ = absl::InfinitePast();
  bool reloading_ = false;
  mutable absl::Mutex refusal_mu_;
  absl::Status shared_refusal_ ABSL_GUARDED_BY(refusal_mu_);
};

}  // namespace paceline::masterd
