#pragma once
// Rpc: a client command's connection to the master — the resolved address and token, a gRPC
// channel, and per-call contexts carrying the bearer token and a deadline. Call() turns the
// gRPC status into an absl::Status whose message says what to do about it.
//
// Thread-safety: one Rpc per command; not shared.

#include <chrono>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "cli/client_config.h"
#include "cli/context.h"

namespace paceline::cli {

class Rpc {
 public:
  static absl::StatusOr<Rpc> Connect(const ClientFlags& flags);

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  const std::string& address() const { return client_.addr; }
  // A context with the token and a deadline (`timeout` from now; zero: no deadline).
  std::unique_ptr<grpc::ClientContext> Context(
      std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Explains a failed call: unreachable master, wrong token, or the server's message.
  absl::Status Explain(const grpc::Status& s) const;

 private:
  ResolvedClient client_;
  std::shared_ptr<grpc::Channel> channel_;
};

// ExplainRpcError for statuses already converted (see info_command.cc).
absl::Status ExplainRpcError(const absl::Status& s, const ResolvedClient& client);

}  // namespace paceline::cli
