#pragma once
// Cluster: the master's running state — the scheduler core on the event loop, the store behind
// the group committer, and the connected agents. It is the one place that applies the core's
// Actions, in this order:
//   1. the core mutates its memory and returns Actions (on the loop thread);
//   2. actions.batch goes to the group committer (the writer thread);
//   3. when it is durable, back on the loop: launches and kills go to the agents' sessions and
//      the waiting API call is answered.
// A failed commit answers UNAVAILABLE, and memory is then ahead of the store: the cluster
// stops accepting changes, closes the agents' streams (they keep their tasks running and
// resend every unacknowledged update when they connect again) and, once a second, tries to
// reload: it reads the store, rebuilds the core from it exactly as after a restart and accepts
// agents and changes again. Nothing acknowledged is lost; nothing unacknowledged is kept.
//
// A standby (led_by_lease) keeps warm: every 500 ms it reads what the leader committed since
// the revision it last saw (Store::ReadChanges) into a mirror of the store. BecomeLeader then
// reads only the changes since that revision and builds the core from the mirror, instead of
// reading the whole store.
//
// Thread-safety: Mutate/Read/Post are thread-safe; the core is touched only on the loop.

#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "api/agent_link.h"
#include "api/backend.h"
#include "api/event_hub.h"
#include "common/defaults.h"
#include "masterd/event_loop.h"
#include "records/batch_coalescer.h"
#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"
#include "store/store.h"
#include "store/store_mirror.h"
#include "wire/watch_events.h"

namespace paceline::masterd {

struct ClusterOptions {
  absl::Duration cycle = defaults::kCycle;
  // What agents are told to heartbeat at when they register (OpenAgent).
  absl::Duration heartbeat_interval = defaults::kHeartbeatInterval;
  // One of several masters (masterd/leadership.h): start as a standby that serves nothing,
  // lead only when BecomeLeader() is called, and after a failed commit stop leading rather
  // than reload by itself.
  bool led_by_lease = false;
};

class Cluster final : public api::Backend {
 public:
  Cluster(scheduler::CoreConfig core_config, store::Store* store, ClusterOptions options);
  ~Cluster();

  // Builds the core from the store (a standby: an empty core that serves nothing), then starts
  // the loop.
  absl::Status Start();
  void Stop();
  // How the records kept beside the core (tokens, secrets) reach their books: `f(records,
  // true)` with every token and secret of the store each time the core is rebuilt from it
  // (start, reload, take-over); a standby calls `f(changes, false)` with those written or
  // deleted since its last read of the store. Set before Start().
  using RecordsFn = std::function<void(const store::StoreChanges&, bool all)>;
  void OnRecords(RecordsFn f) { on_records_ = std::move(f); }
  // Called on the loop's thread with each launch message just before it is sent (the master
  // puts the task's secret values in; they are never stored). Set before Start().
  using LaunchFn = std::function<void(const scheduler::Launch&, v1::LaunchTask&)>;
  void OnLaunch(LaunchFn f) { on_launch_ = std::move(f); }

  // Several masters (thread-safe, blocking): runs `fence` on the store's writer thread (it
  // fences every later commit by the new term), then rebuilds from the followed state plus the
  // changes since (or from the whole store, when it has not followed it) and serves.
  absl::Status BecomeLeader(const std::function<void(store::Store&)>& fence);
  // Stops serving with `why` (it carries the leader's address): changes, reads and agent
  // streams are refused with it; the agents' streams are ended.
  void StepDown(const absl::Status& why);
  // OK while this master serves calls; otherwise why not (the API's gate, api/auth.h).
  absl::Status Serving() const;
  // A standby: how old the followed state is (since the snapshot of its last successful read).
  // InfiniteDuration while it leads, or has not followed yet.
  absl::Duration ReplicationLag() const;

  // api::Backend (see api/backend.h). ReadEvents reads on the store's writer thread.
  absl::Status Mutate(const MutateFn& fn) override;
  void MutateAsync(MutateFn fn, std::function<void(absl::Status)> done) override;
  void RunRead(const ReadFn& fn) override {
    loop_.Read([&] { fn(*core_); });
  }
  absl::StatusOr<std::vector<records::TaskEvent>> ReadEvents(TaskId task, size_t limit) override;
  absl::StatusOr<std::unique_ptr<api::AgentProtocol>> OpenAgent(
      std::shared_ptr<api::AgentLink> link, const v1::AgentMessage& first) override;
  void Broadcast(const v1::MasterMessage& msg) override;
  absl::StatusOr<v1::LogResponse> FetchLogs(const std::string& host, v1::LogRequest request,
                                            absl::Duration timeout) override;
  api::EventHub& events() override { return hub_; }
  store::GroupCommitStats CommitStats() const override { return committer_->stats(); }
  DurationHistogram CycleTimes() const override {
    absl::MutexLock lock(&cycles_mu_);
    return cycle_times_;
  }

  // Agent links, by host name (set and cleared by AgentConnection). A newer link of a host
  // replaces (and closes) the older one.
  void Attach(std::shared_ptr<api::AgentLink> link);
  void Detach(const api::AgentLink* link);

  // The answer of `host`'s agent to FetchLogs (from its stream handler); an answer to a request
  // sent to another host is dropped.
  void DeliverLogs(const std::string& host, const v1::LogResponse& response);

  const store::GroupCommitter& committer() const { return *committer_; }
  // Commits a batch that no state of the core depends on (audit records) straight through the
  // group committer, without a turn of the loop; `done` runs on the writer thread.
  void CommitAside(records::WriteBatch batch, std::function<void(absl::Status)> done) {
    committer_->Submit(std::move(batch), std::move(done));
  }
  // Runs `read` on the store's writer thread, after every earlier commit, and waits for it.
  void ReadStore(const std::function<void(store::Store&)>& read) { committer_->RunOnWriter(read); }
  store::Store* store() { return store_; }

 private:
  // Makes `actions` durable, then dispatches them and calls `done` (loop thread). Mergeable
  // batches (records/batch_coalescer.h) join the turn's batch; others go alone, after it.
  void Apply(scheduler::Actions actions, absl::Time now, std::function<void(absl::Status)> done);
  // Submits the turn's batch (at the end of each turn of the loop, and before a batch that
  // cannot join it).
  void CommitTurn();
  // Submits `batch`; once durable, publishes `watch`, dispatches `actions` and calls `dones`.
  void Submit(records::WriteBatch batch, scheduler::Actions actions,
              std::vector<v1::WatchEvent> watch,
              std::vector<std::function<void(absl::Status)>> dones);
  void Dispatch(const scheduler::Actions& actions);
  void OnTick();
  // A commit failed: stop changes and drop the agents until Reload() succeeds (loop thread).
  void OnStoreFailure(const absl::Status& s);
  // Stops serving with `why` and ends the watches and agent streams (loop thread).
  void Refuse(const absl::Status& why);
  void SetRefusal(absl::Status s);
  absl::Status LoadAndRebuild();
  // Reads the store and rebuilds from it, once a second at most, without blocking the loop.
  void TryReload();
  // A new core from the store's contents, as after a restart (loop thread, or before it runs).
  // With `more`: the tasks a streaming load hands over after `contents` (store/load_queue.h).
  absl::Status Rebuild(const records::StoreContents& contents,
                       const records::TaskBatches& more = nullptr);
  // A standby: reads the changes since the mirror's revision, every kFollowEvery at most,
  // without blocking the loop (loop thread).
  void Follow();
  // BecomeLeader's rebuild: from the mirror and the changes since, or the whole store.
  absl::Status TakeOver();

  const ClusterOptions options_;
  RecordsFn on_records_;
  LaunchFn on_launch_;
  const scheduler::CoreConfig core_config_;
  std::unique_ptr<scheduler::SchedulerCore> core_;
  store::Store* store_;
  std::unique_ptr<store::GroupCommitter> committer_;
  EventLoop loop_;
  // Loop thread only: why changes are refused (OK: they are not); the reload epoch, so that
  // answers to commits of an earlier epoch do not touch the state of this one; when to try
  // reloading next. shared_refusal_ is the copy other threads read (Serving()).
  absl::Status refusal_;
  mutable absl::Mutex refusal_mu_;
  absl::Status shared_refusal_ ABSL_GUARDED_BY(refusal_mu_);
  uint64_t epoch_ = 0;
  absl::Time next_reload_ = absl::InfinitePast();
  bool reloading_ = false;
  // Loop thread only: the followed state; a read of changes in flight; when to read next; the
  // generation, bumped when the mirror is taken or dropped, so that a read begun before is
  // discarded; whether the store can be followed at all.
  store::StoreMirror mirror_;
  bool following_ = false;
  absl::Time next_follow_ = absl::InfinitePast();
  uint64_t mirror_generation_ = 0;
  bool followable_ = true;
  absl::Status follow_error_;  // the last failed read, logged once
  // When the snapshot of the mirror's last successful read was taken (refusal_mu_).
  absl::Time followed_at_ ABSL_GUARDED_BY(refusal_mu_) = absl::InfinitePast();
  api::EventHub hub_;
  wire::PublishedJobStates published_states_;  // loop thread only
  // Loop thread only: the changes of this turn of the loop, committed together at its end;
  // the epoch they were computed in (a reload in the turn drops them).
  struct Turn {
    records::BatchCoalescer batch;
    scheduler::Actions actions;  // launches and kills, in order (the batch is above)
    std::vector<v1::WatchEvent> watch;
    std::vector<std::function<void(absl::Status)>> dones;
    uint64_t epoch = 0;
  };
  Turn turn_;
  mutable absl::Mutex cycles_mu_;
  DurationHistogram cycle_times_ ABSL_GUARDED_BY(cycles_mu_);
  absl::Mutex sessions_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<api::AgentLink>> sessions_
      ABSL_GUARDED_BY(sessions_mu_);
  struct LogWaiter {
    std::string host;  // asked: only its agent's answer counts
    absl::Notification done;
    v1::LogResponse response;
  };
  absl::Mutex logs_mu_;
  uint64_t next_log_request_ ABSL_GUARDED_BY(logs_mu_) = 1;
  absl::flat_hash_map<uint64_t, std::shared_ptr<LogWaiter>> log_waiters_ ABSL_GUARDED_BY(logs_mu_);
};

}  // namespace paceline::masterd
