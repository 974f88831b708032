#pragma once
// The CLI's one way to talk to the master. Rpc is a command's connection: the resolved address
// and token and a gRPC channel. Call() makes one unary call on it — a fresh context with the
// bearer token and a deadline, the stub's method, and a failed status turned into an
// absl::Status whose message says what to do about it (Explain: an unreachable master says
// where it looked and how to start one, a refused token says where tokens come from, anything
// else is the master's own message, which names the field). The free Call() connects with the
// command's flags first: the whole life of a typical client command is
//
//   absl::StatusOr<v1::GetPoolResponse> resp = Call(ctx.client, &v1::PoolService::Stub::GetPool,
//                                                   req);
//
// and Run() adds what every command does next: a failure fails the command, and -o json|yaml
// prints the response; only a table is left for the command to print:
//
//   std::optional<v1::GetPoolResponse> resp = Run(ctx, &v1::PoolService::Stub::GetPool, req);
//   if (!resp) return;
//
// Streaming calls (watch, logs -f) take Context() and Explain() directly. The exit code for a
// failure is CommandContext::Fail's (cli/context.h).
//
// Thread-safety: one Rpc per command; not shared.

#include <chrono>
#include <memory>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "cli/client_config.h"
#include "cli/context.h"
#include "cli/output.h"

namespace paceline::cli {

inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(30);

class Rpc {
 public:
  static absl::StatusOr<Rpc> Connect(const ClientFlags& flags);

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  const std::string& address() const { return client_.addr; }
  // A context with the token and a deadline (`timeout` from now; zero: no deadline).
  std::unique_ptr<grpc::ClientContext> Context(
      std::chrono::milliseconds timeout = kDefaultTimeout) const;
  // Explains a failed call: unreachable master, wrong token, or the server's message.
  absl::Status Explain(const grpc::Status& s) const;

  // One unary call of `Stub` (e.g. &v1::JobService::Stub::GetJob).
  template <typename Stub, typename Req, typename Resp>
  absl::StatusOr<Resp> Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                            const Req& req,
                            std::chrono::milliseconds timeout = kDefaultTimeout) const {
    Stub stub(channel_);
    Resp resp;
    grpc::Status s = (stub.*method)(Context(timeout).get(), req, &resp);
    if (!s.ok()) return Explain(s);
    return resp;
  }

 private:
  ResolvedClient client_;
  std::shared_ptr<grpc::Channel> channel_;
};

// Connects with the command's flags and makes one unary call.
template <typename Stub, typename Req, typename Resp>
absl::StatusOr<Resp> Call(const ClientFlags& flags,
                          grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                          const Req& req, std::chrono::milliseconds timeout = kDefaultTimeout) {
  absl::StatusOr<Rpc> rpc = Rpc::Connect(flags);
  if (!rpc.ok()) return rpc.status();
  return rpc->Call(method, req, timeout);
}

// Call(), then: a failure fails the command (nullopt); -o json|yaml prints the response
// (nullopt); a table format returns the response for the command to print.
template <typename Stub, typename Req, typename Resp>
std::optional<Resp> Run(CommandContext& ctx,
                        grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                        const Req& req) {
  absl::StatusOr<Resp> resp = Call(ctx.client, method, req);
  if (!resp.ok()) {
    ctx.Fail(resp.status());
    return std::nullopt;
  }
  if (PrintStructured(ctx.client, *resp)) return std::nullopt;
  return *std::move(resp);
}

}  // namespace paceline::cli
