#pragma once
// Backend: what the API's services need from the master process, as an interface the master
// implements (masterd::Cluster), so that the API depends on no process code:
//   - the scheduler core, touched only on the master's event loop: Mutate runs a change there
//     and answers once it is durable and sent; Read runs a read there;
//   - a task's event history from the store;
//   - the agents: a new agent stream becomes an AgentProtocol (OpenAgent); messages to every
//     agent (Broadcast); a run's logs fetched from its host (FetchLogs);
//   - the watch events (events()) and the store's commit statistics (for /metrics).
//
// Thread-safety: every method may be called from any thread (gRPC and HTTP handler threads).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/agent_link.h"
#include "api/event_hub.h"
#include "common/duration_histogram.h"
#include "paceline/v1/host.pb.h"
#include "records/records.h"
#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"

namespace paceline::api {

// The master's side of one agent's connection, whatever transport carries it.
class AgentProtocol {
 public:
  virtual ~AgentProtocol() = default;
  // One message from the agent. INVALID_ARGUMENT (naming the field) for a malformed message:
  // the transport ends the connection with it.
  virtual absl::Status OnMessage(const v1::AgentMessage& msg) = 0;
  // Detaches and closes the link (idempotent).
  virtual void Close() = 0;
};

// One exec session (TaskService.Exec) as the API sees it: its input to the agent. Destroying it
// forgets the session and, unless the agent ended it (an exit or an error), cancels it there:
// the command is killed.
class ExecChannel {
 public:
  virtual ~ExecChannel() = default;
  // Sends `input` to the agent (its session id is set here); false once the link is gone.
  virtual bool Send(v1::ExecInput input) = 0;
};
// Receives a session's output from its agent, on the agent stream's reader thread: it must not
// block. After an output with `exited` or `error` (the agent could not start the command), or
// an UNAVAILABLE status (the agent's link is gone), nothing more comes.
using ExecSink = std::function<void(absl::StatusOr<v1::ExecOutput>)>;

// What the API sends to connected agents off the core's loop: a message to all, a run's logs,
// an exec session. Implemented by the master's agent registry; callable from any thread.
class AgentTraffic {
 public:
  virtual ~AgentTraffic() = default;
  // Sends `msg` to every connected agent.
  virtual void Broadcast(const v1::MasterMessage& msg) = 0;
  // Asks `host`'s agent for a piece of a run's logs and waits (at most `timeout`) for it.
  // UNAVAILABLE when the host is not connected or does not answer in time.
  virtual absl::StatusOr<v1::LogResponse> FetchLogs(const std::string& host, v1::LogRequest request,
                                                    absl::Duration timeout) = 0;

  // Starts exec session `start` (its id is set here) on `host`'s agent, its output to `sink`.
  // UNAVAILABLE when the host is not connected. Touches no core state: the event loop never
  // sees exec traffic.
  virtual absl::StatusOr<std::unique_ptr<ExecChannel>> OpenExec(const std::string& host,
                                                                v1::ExecStart start,
                                                                ExecSink sink) = 0;
};

class Backend {
 public:
  using MutateFn =
      std::function<absl::Status(scheduler::SchedulerCore&, absl::Time, scheduler::Actions&)>;
  using ReadFn = std::function<void(const scheduler::SchedulerCore&)>;

  virtual ~Backend() = default;

  // Runs `fn` on the loop; when fn succeeds, waits until its changes are durable and sent.
  virtual absl::Status Mutate(const MutateFn& fn) = 0;
  // Same, without waiting (agent status updates); `done` runs on the loop thread.
  virtual void MutateAsync(MutateFn fn, std::function<void(absl::Status)> done) = 0;
  // Runs `fn` on the loop and waits for it.
  virtual void RunRead(const ReadFn& fn) = 0;
  // A read on the loop that returns its result: Read<T>([&](const SchedulerCore&) { ... }).
  template <typename T, typename Fn>
  T Read(Fn fn) {
    std::optional<T> out;
    RunRead([&](const scheduler::SchedulerCore& core) { out.emplace(fn(core)); });
    return *std::move(out);
  }

  // A task's events from the store, oldest first, at most `limit`.
  virtual absl::StatusOr<std::vector<records::TaskEvent>> ReadEvents(TaskId task, size_t limit) = 0;

  // Registers an agent from the first message of its stream (see masterd/agent_connection.h).
  virtual absl::StatusOr<std::unique_ptr<AgentProtocol>> OpenAgent(
      std::shared_ptr<AgentLink> link, const v1::AgentMessage& first) = 0;
  // The connected agents, for what goes to them outside the core (AgentTraffic).
  virtual AgentTraffic& agents() = 0;

  // Job and task events for JobService.Watch, published once durable.
  virtual EventHub& events() = 0;
  virtual store::GroupCommitStats CommitStats() const = 0;
  // How long the scheduling cycles took, since the master started.
  virtual DurationHistogram CycleTimes() const = 0;
};

}  // namespace paceline::api
