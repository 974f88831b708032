#pragma once
// Cluster: the master's running state — the scheduler core on the event loop, the store behind
// the group committer, and the connected agents. It is the one place that applies the core's
// Actions, in this order:
//   1. the core mutates its memory and returns Actions (on the loop thread);
//   2. actions.batch goes to the group committer (the writer thread);
//   3. when it is durable, back on the loop: launches and kills go to the agents' sessions and
//      the waiting API call is answered. A failed commit answers UNAVAILABLE, and the master
//      stops accepting changes until its state is reloaded from the store (a restart): memory
//      never runs ahead of what was acknowledged.
//
// Thread-safety: Mutate/Read/Post are thread-safe; the core is touched only on the loop.

#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "master/agent_link.h"
#include "master/event_hub.h"
#include "master/event_loop.h"
#include "master/watch_events.h"
#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace paceline::master {

struct ClusterOptions {
  absl::Duration cycle = absl::Milliseconds(50);
};

class Cluster {
 public:
  using MutateFn =
      std::function<absl::Status(scheduler::SchedulerCore&, absl::Time, scheduler::Actions&)>;

  Cluster(std::unique_ptr<scheduler::SchedulerCore> core, store::Store* store,
          ClusterOptions options);
  ~Cluster();

  // Restores the core from the store, then starts the loop.
  absl::Status Start();
  void Stop();

  // Runs `fn` on the loop; when fn succeeds, waits until its changes are durable and sent.
  absl::Status Mutate(const MutateFn& fn);
  // Same, without waiting (agent status updates); `done` runs on the loop thread.
  void MutateAsync(MutateFn fn, std::function<void(absl::Status)> done);
  // Runs a read on the loop and returns its result.
  template <typename T>
  T Read(const std::function<T(const scheduler::SchedulerCore&)>& fn) {
    return loop_.Call<T>([&] { return fn(*core_); });
  }

  // A task's events from the store, read on the store's writer thread.
  absl::StatusOr<std::vector<records::TaskEvent>> ReadEvents(TaskId task, size_t limit);

  // Agent links, by host name (set and cleared by AgentConnection). A newer link of a host
  // replaces (and closes) the older one.
  void Attach(std::shared_ptr<AgentLink> link);
  void Detach(const AgentLink* link);

  // Sends `msg` to every connected agent.
  void Broadcast(const v1::MasterMessage& msg);

  // Asks `host`'s agent for a piece of a run's logs and waits (at most `timeout`) for it.
  // UNAVAILABLE when the host is not connected or does not answer in time.
  absl::StatusOr<v1::LogResponse> FetchLogs(const std::string& host, v1::LogRequest request,
                                            absl::Duration timeout);
  // An agent's answer to FetchLogs (from its stream handler).
  void DeliverLogs(const v1::LogResponse& response);

  // Job and task events for JobService.Watch, published once durable.
  EventHub& events() { return hub_; }

  const store::GroupCommitter& committer() const { return *committer_; }
  store::Store* store() { return store_; }

 private:
  void Apply(scheduler::Actions actions, absl::Time now, std::function<void(absl::Status)> done);
  void Dispatch(const scheduler::Actions& actions);
  void OnTick();

  std::unique_ptr<scheduler::SchedulerCore> core_;
  store::Store* store_;
  std::unique_ptr<store::GroupCommitter> committer_;
  EventLoop loop_;
  bool store_failed_ = false;  // loop thread only
  EventHub hub_;
  PublishedJobStates published_states_;  // loop thread only
  absl::Mutex sessions_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<AgentLink>> sessions_
      ABSL_GUARDED_BY(sessions_mu_);
  struct LogWaiter {
    absl::Notification done;
    v1::LogResponse response;
  };
  absl::Mutex logs_mu_;
  uint64_t next_log_request_ ABSL_GUARDED_BY(logs_mu_) = 1;
  absl::flat_hash_map<uint64_t, std::shared_ptr<LogWaiter>> log_waiters_ ABSL_GUARDED_BY(logs_mu_);
};

}  // namespace paceline::master
