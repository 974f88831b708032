#pragma once
// AgentLink: how the master talks to one connected agent, whatever carries the messages — a
// gRPC stream for a real agent (AgentSession), or an in-process queue for the simulated hosts
// of `paceline bench scale`. The protocol itself (register, heartbeats, status updates and
// their acknowledgements) is AgentConnection's, the same for every link.
//
// Thread-safety: every method is thread-safe; Send never blocks (the event loop calls it).

#include <string>
#include <utility>
#include <vector>

#include "paceline/v1/host.pb.h"

namespace paceline::api {

class AgentLink {
 public:
  virtual ~AgentLink() = default;

  // The host name the agent registered with.
  virtual const std::string& host() const = 0;
  // The agent's IP address as this end sees it; empty if unknown.
  virtual const std::string& address() const = 0;
  // The client certificate the agent presented (PEM); empty without TLS.
  virtual const std::string& certificate_pem() const {
    static const std::string kNone;
    return kNone;
  }
  // Queues `msg` for the agent; dropped once the link is closed.
  virtual void Send(v1::MasterMessage msg) = 0;
  // Queues `msgs`, in order, as one burst: a link that batches (wire/stream_batch.h) sends
  // them in as few stream messages as it can.
  virtual void SendAll(std::vector<v1::MasterMessage> msgs) {
    for (v1::MasterMessage& m : msgs) Send(std::move(m));
  }
  // No more sends: what is queued is still delivered, then the link is done.
  virtual void Close() = 0;
  virtual bool closed() const = 0;
  // The master ends the connection (e.g. the host was declared lost): the agent must connect
  // and register again. No effect once closed.
  virtual void Abort() = 0;
};

}  // namespace paceline::api
