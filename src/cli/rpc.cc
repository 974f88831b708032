#include "cli/rpc.h"

#include "absl/strings/str_cat.h"
#include "api/grpc_status.h"

namespace paceline::cli {

absl::StatusOr<Rpc> Rpc::Connect(const ClientFlags& flags) {
  absl::StatusOr<ResolvedClient> client = ResolveClient(flags);
  if (!client.ok()) return client.status();
  Rpc rpc;
  rpc.client_ = *client;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  rpc.channel_ = grpc::CreateCustomChannel(client->addr, grpc::InsecureChannelCredentials(), args);
  return rpc;
}

std::unique_ptr<grpc::ClientContext> Rpc::Context(std::chrono::milliseconds timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (timeout.count() > 0) ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  if (!client_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + client_.token);
  return ctx;
}

absl::Status Rpc::Explain(const grpc::Status& s) const {
  return ExplainRpcError(api::FromGrpcStatus(s), client_);
}

absl::Status ExplainRpcError(const absl::Status& s, const ResolvedClient& client) {
  if (s.code() == absl::StatusCode::kUnavailable &&
      s.message().find("store") == absl::string_view::npos) {
    return absl::UnavailableError(absl::StrCat(
        "cannot reach the master at ", client.addr, " (from ", client.addr_source,
        "): ", s.message(), "; is it running? Start one with `make up` or `paceline up`"));
  }
  if (s.code() == absl::StatusCode::kUnauthenticated) {
    return absl::UnauthenticatedError(
        absl::StrCat(s.message(), " (the master at ", client.addr,
                     " wants its token: --token, $PACELINE_TOKEN, token: in ~/.paceline/config, or "
                     "./data/token)"));
  }
  return s;
}

}  // namespace paceline::cli
