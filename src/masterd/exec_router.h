#pragma once
// ExecRouter: the master's exec sessions (TaskService.Exec), each between one API call and the
// agent hosting the run, by a session id drawn here. The API handler opens a session on a host's
// current link and sends the caller's input through its ExecChannel; the agent's outputs come in
// on that agent's stream (Deliver) and go to the session's sink. A session ends when the agent
// reports the command's exit or an error, when the API side drops its channel (the agent is told
// to cancel: the command is killed), or when the agent's link goes (LinkGone: the sink gets an
// error). Nothing here touches the core: exec traffic never reaches the event loop.
//
// Memory: the router holds no data; flow control between the agent and the API handler
// (ExecStart.window, credits) bounds what is in flight per session.
//
// Thread-safety: every method is thread-safe; sinks are called without the router's lock held.

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/agent_link.h"
#include "api/backend.h"
#include "paceline/v1/host.pb.h"

namespace paceline::masterd {

class ExecRouter {
 public:
  // Sends the start of session `start` on `link` (UNAVAILABLE when it is closed).
  absl::StatusOr<std::unique_ptr<api::ExecChannel>> Open(std::shared_ptr<api::AgentLink> link,
                                                         v1::ExecStart start, api::ExecSink sink);
  // An output of the agent on `link`; one for a session that is not that link's is dropped.
  void Deliver(const api::AgentLink* link, const v1::ExecOutput& out);
  // `link` is gone: its sessions end with an error.
  void LinkGone(const api::AgentLink* link);
  size_t open_sessions() const;

 private:
  class Channel;
  struct Session {
    const api::AgentLink* link = nullptr;
    std::string host;
    std::shared_ptr<api::ExecSink> sink;
  };
  // Forgets `id`; whether it was still open (the agent had not ended it).
  bool Forget(uint64_t id);

  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, Session> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paceline::masterd
