#pragma once
// Cluster: the master's running state, composed of its parts, and the API's Backend over them:
//   - the event loop (event_loop.h), the one thread that touches the scheduler core;
//   - the store behind the group committer (store/group_commit.h), its writer thread;
//   - the CoreKeeper (core_keeper.h): the core, rebuilt from the store at start, after a failed
//     commit and at a take-over; whether the master serves; a standby's following of the store;
//   - the CommitPath (commit_path.h): the core's Actions made durable (one batch per turn of
//     the loop), then published, dispatched and answered;
//   - the AgentRegistry (agent_registry.h): the agents' connections, what is sent to them, and
//     the logs fetched from them;
//   - the event hub of the watches.
// A change (Mutate) runs on the loop against the core, unless the keeper refuses changes; its
// Actions take the commit path. Each tick runs the scheduling cycle, or, while changes are
// refused, lets the keeper recover (reload, or follow the store as a standby).
//
// Thread-safety: the Backend's methods and Start/Stop are thread-safe; each part's header says
// which of its methods are (the core is touched only on the loop).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "api/agent_link.h"
#include "api/backend.h"
#include "api/event_hub.h"
#include "common/defaults.h"
#include "masterd/agent_registry.h"
#include "masterd/commit_path.h"
#include "masterd/core_keeper.h"
#include "masterd/event_loop.h"
#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace paceline::masterd {

struct ClusterOptions {
  absl::Duration cycle = defaults::kCycle;
  // What agents are told to heartbeat at when they register (OpenAgent).
  absl::Duration heartbeat_interval = defaults::kHeartbeatInterval;
  // One of several masters (masterd/leadership.h): start as a standby that serves nothing,
  // lead only when CoreKeeper::BecomeLeader() is called, and after a failed commit stop leading
  // rather than reload by itself.
  bool led_by_lease = false;
  // A standby answers reads from its followed state while it is at most this old (CoreKeeper).
  absl::Duration standby_read_bound = defaults::kStandbyReadBound;
};

class Cluster final : public api::Backend {
 public:
  Cluster(scheduler::CoreConfig core_config, store::Store* store, ClusterOptions options);
  ~Cluster();

  // Builds the core from the store (a standby: an empty core that serves nothing), then starts
  // the loop. Set the hooks of the keeper (OnRecords) and the agents (OnLaunch) before.
  absl::Status Start();
  void Stop();

  // api::Backend (see api/backend.h). ReadEvents reads on the store's writer thread.
  absl::Status Mutate(const MutateFn& fn) override;
  void MutateAsync(MutateFn fn, std::function<void(absl::Status)> done) override;
  void RunRead(const ReadFn& fn) override;
  absl::StatusOr<std::vector<records::TaskEvent>> ReadEvents(TaskId task, size_t limit) override;
  absl::StatusOr<std::unique_ptr<api::AgentProtocol>> OpenAgent(
      std::shared_ptr<api::AgentLink> link, const v1::AgentMessage& first) override;
  api::EventHub& events() override { return hub_; }
  store::GroupCommitStats CommitStats() const override { return committer_->stats(); }
  DurationHistogram CycleTimes() const override {
    absl::MutexLock lock(&cycles_mu_);
    return cycle_times_;
  }

  // The parts other components of the master use.
  // The agents' connections (AgentConnection attaches and detaches its link, delivers logs).
  AgentRegistry& agents() override { return agents_; }
  // The core's keeper: serving or not, leadership (masterd/leadership.h), the records hook.
  CoreKeeper& keeper() { return keeper_; }
  // The group committer's side door, for what bypasses the loop: batches that no state of the
  // core depends on (audit records) and reads of the store on its writer thread
  // (store/group_commit.h, StoreWriter). Commits that change the core's state go through Mutate.
  store::StoreWriter& committer() { return *committer_; }
  // The store's revision of this master's newest commit of followed rows (store.h).
  int64_t CommittedRevision() const { return committer_->committed_revision(); }
  // Called on the loop with the usage of each batch once durable (CommitPath::OnUsage); set
  // before Start.
  void OnUsage(CommitPath::UsageFn f) { commits_.OnUsage(std::move(f)); }

 private:
  void OnTick();

  const ClusterOptions options_;
  std::unique_ptr<store::GroupCommitter> committer_;
  EventLoop loop_;
  api::EventHub hub_;
  AgentRegistry agents_;
  CommitPath commits_;
  CoreKeeper keeper_;
  mutable absl::Mutex cycles_mu_;
  DurationHistogram cycle_times_ ABSL_GUARDED_BY(cycles_mu_);
};

}  // namespace paceline::masterd
