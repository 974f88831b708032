#pragma once
// AgentRegistry: the master's connected agents, by host name, and what goes to them — the
// launches and kills of a durable batch (Dispatch: one burst per host), messages to every agent
// (Broadcast), and a run's logs asked of its host (FetchLogs, answered through DeliverLogs).
//
// A link is attached by its AgentConnection once the agent registers and detached when it
// closes; a newer link of a host replaces (and closes) the older one. A launch or kill for a
// host with no link is dropped: the host will be declared lost.
//
// Thread-safety: every method is thread-safe. Dispatch is called on the event loop; Send never
// blocks (api/agent_link.h), so the loop never waits for an agent.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "api/agent_link.h"
#include "api/backend.h"
#include "masterd/exec_router.h"
#include "paceline/v1/host.pb.h"
#include "scheduler/scheduler_core.h"

namespace paceline::masterd {

class AgentRegistry final : public api::AgentTraffic {
 public:
  // Called on the loop's thread with each launch message just before it is sent (the master
  // puts the task's secret values in; they are never stored). Set before the loop starts.
  using LaunchFn = std::function<void(const scheduler::Launch&, v1::LaunchTask&)>;
  void OnLaunch(LaunchFn f) { on_launch_ = std::move(f); }

  // Links, by host name (set and cleared by AgentConnection).
  void Attach(std::shared_ptr<api::AgentLink> link);
  void Detach(const api::AgentLink* link);

  // Sends the launches and kills of `actions` (durable by now), one burst per host; a launch
  // names the addresses of its gang's peers as their agents connected.
  void Dispatch(const scheduler::Actions& actions);
  // Sends `msg` to every connected agent.
  void Broadcast(const v1::MasterMessage& msg) override;
  // Ends every agent's stream (they connect and register again), or closes every link (the
  // master stops: what is queued is still delivered).
  void AbortAll();
  void CloseAll();

  // Asks `host`'s agent for a piece of a run's logs and waits (at most `timeout`) for it
  // (agent_registry_logs.cc). UNAVAILABLE when the host is not connected or does not answer in
  // time; NOT_FOUND with the agent's error.
  absl::StatusOr<v1::LogResponse> FetchLogs(const std::string& host, v1::LogRequest request,
                                            absl::Duration timeout) override;
  // The answer of `host`'s agent to FetchLogs (from its stream handler); an answer to a request
  // sent to another host, or one nobody waits for any more, is dropped.
  void DeliverLogs(const std::string& host, const v1::LogResponse& response);

  // Starts an exec session on `host`'s agent (api/backend.h, exec_router.h; in
  // agent_registry_exec.cc), and an output of the agent on `link` for one of its sessions.
  absl::StatusOr<std::unique_ptr<api::ExecChannel>> OpenExec(const std::string& host,
                                                             v1::ExecStart start,
                                                             api::ExecSink sink) override;
  void DeliverExec(const api::AgentLink* link, const v1::ExecOutput& out);
  ExecRouter& exec() { return exec_; }

  // Sends `msg` to `host` if it is connected and its link open; whether it was sent.
  bool SendTo(const std::string& host, v1::MasterMessage msg);
  // The IP address of `host`'s agent as this master sees it; "" when it is not connected.
  std::string AddressOf(const std::string& host);

 private:
  LaunchFn on_launch_;
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
  ExecRouter exec_;
};

}  // namespace paceline::masterd
