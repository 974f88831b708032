#pragma once
// Bearer-token authentication for every gRPC call: the client sends
// `authorization: Bearer <token>`; a master started with a token refuses calls without the
// right one (UNAUTHENTICATED). An empty configured token turns the check off (tests, local).
//
// Check() then asks the gate whether this master serves calls right now: a standby, or a
// master reloading its state after a store failure, answers every call (but the cluster info)
// with the gate's status, e.g. UNAVAILABLE "... leader: HOST:PORT" (see masterd/leadership.h).
//
// Thread-safety: immutable after construction; the gate must be thread-safe.

#include <functional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace paceline::api {

class TokenAuth {
 public:
  using Gate = std::function<absl::Status()>;
  explicit TokenAuth(std::string token, Gate gate = nullptr)
      : token_(std::move(token)), gate_(std::move(gate)) {}
  grpc::Status Check(const grpc::ServerContext* context) const;

 private:
  grpc::Status CheckToken(const grpc::ServerContext* context) const;

  const std::string token_;
  const Gate gate_;
};

}  // namespace paceline::api
