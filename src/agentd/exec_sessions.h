#pragma once
// ExecSessions: the agent daemon's side of exec sessions (TaskService.Exec). The master's
// ExecStart names a live run; the agent loop builds the command from the run's context
// (TaskRuntime::ExecCommandFor), and each session then runs on a thread of its own
// (agent/exec/exec_session.h). What the sessions have for the master waits in an outbox that
// the loop drains onto the stream (Take), so the stream is still written by the loop alone;
// the outbox holds at most a window of output per session (the master's credit).
//
// A session ends with the command's exit (its last output), with a cancel from the master, or
// when the stream to the master ends (CancelAll): the command is killed then.
//
// Thread-safety: every method is thread-safe; `wake` is called when the outbox fills.

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/exec/exec_session.h"
#include "paceline/v1/host.pb.h"

namespace paceline::agentd {

class ExecSessions {
 public:
  explicit ExecSessions(std::function<void()> wake) : wake_(std::move(wake)) {}
  ~ExecSessions();

  // Starts `start`'s command, built by `command` (an error is answered to the master).
  void Start(const v1::ExecStart& start, absl::StatusOr<agent::ExecCommand> command);
  // Input for a session (stdin, its end, a resize, credit, a cancel); unknown ones are dropped.
  void Input(const v1::ExecInput& in);
  // Kills every session's command (the stream to the master ended).
  void CancelAll();
  // What waits for the master, in order; joins the threads of sessions that ended.
  std::vector<v1::AgentMessage> Take();
  size_t open() const;

 private:
  struct Session {
    std::unique_ptr<agent::ExecSession> session;
    std::thread thread;
    bool done = false;
  };
  void Push(v1::AgentMessage msg);

  const std::function<void()> wake_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::AgentMessage> outbox_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paceline::agentd
