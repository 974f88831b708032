#pragma once
// AgentSession: the master's side of one agent's Connect stream. The gRPC handler thread reads
// the stream (AgentServiceImpl); a session-owned writer thread drains an outbound queue, so
// that the event loop never blocks on a slow agent. Send() is non-blocking.
//
// Thread-safety: Send/Close are thread-safe.

#include <deque>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "paceline/v1/host.grpc.pb.h"

namespace paceline::master {

using AgentStream = grpc::ServerReaderWriter<v1::MasterMessage, v1::AgentMessage>;

// The IP address in a gRPC peer string: "ipv4:10.0.0.7:5123" -> "10.0.0.7",
// "ipv6:[::1]:5123" -> "::1"; "" for anything else (e.g. a unix socket).
std::string AddressOfPeer(const std::string& peer);

class AgentSession {
 public:
  // `address`: the agent's IP address as this end of the connection sees it (may be empty).
  AgentSession(std::string host, AgentStream* stream, std::string address = "");
  ~AgentSession();  // Close()s and joins the writer if Join() was not called

  const std::string& host() const { return host_; }
  const std::string& address() const { return address_; }
  void Send(v1::MasterMessage msg);
  // Stops the writer after what is queued; further Sends are dropped.
  void Close();
  // Waits for the writer to finish. The stream handler calls Close() and Join() before it
  // returns: the stream must not be written after that.
  void Join();
  bool closed() const;

 private:
  void WriterLoop();

  const std::string host_;
  const std::string address_;
  AgentStream* const stream_;
  mutable absl::Mutex mu_;
  std::deque<v1::MasterMessage> out_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  std::thread writer_;
};

}  // namespace paceline::master
