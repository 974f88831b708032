#pragma once
// AgentSession: the AgentLink of a real agent — the master's side of its gRPC Connect stream.
// The gRPC handler thread reads the stream (AgentServiceImpl, which hands each message to an
// AgentConnection); a session-owned writer thread drains an outbound queue, so that the event
// loop never blocks on a slow agent. Send() is non-blocking.
//
// Thread-safety: every method is thread-safe.

#include <deque>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "api/agent_link.h"
#include "paceline/v1/host.grpc.pb.h"

namespace paceline::api {

using AgentStream = grpc::ServerReaderWriter<v1::MasterMessage, v1::AgentMessage>;

// The IP address in a gRPC peer string: "ipv4:10.0.0.7:5123" -> "10.0.0.7",
// "ipv6:[::1]:5123" -> "::1"; "" for anything else (e.g. a unix socket).
std::string AddressOfPeer(const std::string& peer);

class AgentSession final : public AgentLink {
 public:
  // `address`: the agent's IP address as this end of the connection sees it (may be empty).
  // `ctx` is the stream's; it must outlive the session until Close() (Abort cancels it).
  AgentSession(std::string host, AgentStream* stream, grpc::ServerContext* ctx,
               std::string address = "");
  ~AgentSession() override;  // Close()s and joins the writer if Join() was not called

  const std::string& host() const override { return host_; }
  const std::string& address() const override { return address_; }
  void Send(v1::MasterMessage msg) override;
  // Stops the writer after what is queued; further Sends are dropped.
  void Close() override;
  bool closed() const override;
  // Cancels the stream (the agent reconnects).
  void Abort() override;
  // Waits for the writer to finish. The stream handler calls Close() and Join() before it
  // returns: the stream must not be written after that.
  void Join();

 private:
  void WriterLoop();

  const std::string host_;
  const std::string address_;
  AgentStream* const stream_;
  grpc::ServerContext* const ctx_;
  mutable absl::Mutex mu_;
  std::deque<v1::MasterMessage> out_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  std::thread writer_;
};

}  // namespace paceline::api
