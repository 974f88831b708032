#include "cli/rpc.h"

#include "absl/strings/str_cat.h"

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

absl::Status Rpc::Explain(const grpc::Status& g) const {
  // gRPC's codes are the canonical codes absl::StatusCode names, one for one.
  absl::Status s(static_cast<absl::StatusCode>(g.error_code()), g.error_message());
  if (s.code() == absl::StatusCode::kUnavailable &&
      s.message().find("store") == absl::string_view::npos) {
    return absl::UnavailableError(absl::StrCat(
        "cannot reach the master at ", client_.addr, " (from ", client_.addr_source,
        "): ", s.message(), "; is it running? Start one with `make up` or `paceline up`"));
  }
  if (s.code() == absl::StatusCode::kUnauthenticated) {
    return absl::UnauthenticatedError(
        absl::StrCat(s.message(), " (the master at ", client_.addr,
                     " wants its token: --token, $PACELINE_TOKEN, token: in ~/.paceline/config, or "
                     "./data/token)"));
  }
  return s;
}

}  // namespace paceline::cli
