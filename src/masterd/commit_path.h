#pragma once
// CommitPath: how the core's Actions become durable and then take effect, in this order:
//   1. the core has mutated its memory and returned Actions (on the loop thread);
//   2. actions.batch joins the turn's batch (records/batch_coalescer.h; a batch that deletes
//      anything goes alone, after it), which goes to the group committer (the writer thread)
//      at the end of the turn of the loop;
//   3. when it is durable, back on the loop: the watch events are published, the usage of the
//      runs it ended is handed to OnUsage's function, the launches and kills go to the agents
//      (AgentRegistry::Dispatch) and the waiting calls are answered.
// A failed commit is handed to `on_failure` (the CoreKeeper refuses changes until it has
// rebuilt the core), and the waiting calls are answered with what it returns.
//
// Epochs: each rebuild of the core starts a new epoch (NewEpoch). A change computed in an
// earlier epoch is not in the new core: it is not committed if it was still in the turn, and
// not dispatched if its commit completes after the rebuild; either way it is answered
// UNAVAILABLE ("retry").
//
// Thread-safety: loop thread only (the writer's completions are posted back to the loop).

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/event_hub.h"
#include "masterd/agent_registry.h"
#include "masterd/event_loop.h"
#include "records/batch_coalescer.h"
#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"
#include "wire/watch_events.h"

namespace paceline::masterd {

class CommitPath {
 public:
  // Called on the loop with a failed commit's error; returns what its calls are answered.
  using FailureFn = std::function<absl::Status(const absl::Status&)>;
  // Every pointer must outlive this object.
  CommitPath(store::GroupCommitter* committer, EventLoop* loop, api::EventHub* hub,
             AgentRegistry* agents, FailureFn on_failure);

  // Makes `actions` (just computed by `core`, at `now`) durable, then dispatches them and
  // calls `done` (which may be null). Without a batch, dispatches at once.
  void Apply(const scheduler::SchedulerCore& core, scheduler::Actions actions, absl::Time now,
             std::function<void(absl::Status)> done);
  // Submits the turn's batch (at the end of each turn of the loop, and before a batch that
  // cannot join it).
  void CommitTurn();
  // The core was rebuilt from the store: what was computed before is dropped (see above), and
  // the watch events start over from the new core's state.
  void NewEpoch();
  // Called on the loop with the usage of each batch once it is durable (records/usage.h).
  using UsageFn = std::function<void(const std::vector<records::UsageRecord>&)>;
  void OnUsage(UsageFn f) { on_usage_ = std::move(f); }

 private:
  // Submits `batch`; once durable, publishes `watch`, dispatches `actions` and calls `dones`.
  void Submit(records::WriteBatch batch, scheduler::Actions actions,
              std::vector<v1::WatchEvent> watch,
              std::vector<std::function<void(absl::Status)>> dones);

  store::GroupCommitter* const committer_;
  EventLoop* const loop_;
  api::EventHub* const hub_;
  AgentRegistry* const agents_;
  const FailureFn on_failure_;
  UsageFn on_usage_;
  uint64_t epoch_ = 0;
  wire::PublishedJobStates published_states_;
  // The changes of this turn of the loop, committed together at its end; the epoch they were
  // computed in (a rebuild in the turn drops them).
  struct Turn {
    records::BatchCoalescer batch;
    scheduler::Actions actions;  // launches and kills, in order (the batch is above)
    std::vector<v1::WatchEvent> watch;
    std::vector<std::function<void(absl::Status)>> dones;
    uint64_t epoch = 0;
  };
  Turn turn_;
};

}  // namespace paceline::masterd
