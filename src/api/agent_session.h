#pragma once
// The master's side of a real agent's AgentService.Connect stream, on gRPC's callback API: no
// thread waits on a stream. (A blocking handler thread and a writer thread per stream made the
// kernel's futex wakeups most of the master's CPU once 5,000 agents were connected.)
//
// One stream (NewAgentStream is the Connect method):
//   1. the first message is read; the call's credential is checked for that host
//      (AccessControl::Check, then CheckAgentCertificate), and Backend::OpenAgent registers it
//      on a short-lived thread of its own (it waits until the registration is durable, which a
//      gRPC callback must not);
//   2. every later message goes to the AgentConnection, one read in flight at a time; a
//      malformed one ends the stream with its error;
//   3. the stream's AgentLink (Send) queues messages for the agent, one write in flight; what
//      queued behind a write goes as one batch (wire/stream_batch.h) if the agent reads them;
//      Abort() cancels the stream, Close() stops the writes after what is queued;
//   4. once reads end (the agent left, an error, a cancel), the connection is closed and the
//      stream finishes after its last write; the reactor deletes itself when gRPC is done.
//
// Thread-safety: the link's methods are thread-safe and never block; reactions run on gRPC's
// threads.

#include <string>

#include <grpcpp/grpcpp.h>

#include "api/access_control.h"
#include "api/backend.h"
#include "paceline/v1/host.grpc.pb.h"

namespace paceline::api {

// The IP address in a gRPC peer string: "ipv4:10.0.0.7:5123" -> "10.0.0.7",
// "ipv6:[::1]:5123" -> "::1"; "" for anything else (e.g. a unix socket).
std::string AddressOfPeer(const std::string& peer);
// Whether `text` is an IPv4 or IPv6 address ("10.0.0.7", "::1").
bool IsIpAddress(const std::string& text);

using AgentReactor = grpc::ServerBidiReactor<v1::AgentMessage, v1::MasterMessage>;

// The reactor of a new Connect stream; `cluster` and `access` must outlive the server.
AgentReactor* NewAgentStream(grpc::CallbackServerContext* ctx, Backend* cluster,
                             AccessControl* access);

}  // namespace paceline::api
