#pragma once
// Bearer-token authentication for every gRPC call: the client sends
// `authorization: Bearer <token>`; a master started with a token refuses calls without the
// right one (UNAUTHENTICATED). An empty configured token turns the check off (tests, local).
//
// Thread-safety: immutable after construction.

#include <string>

#include <grpcpp/grpcpp.h>

namespace paceline::api {

class TokenAuth {
 public:
  explicit TokenAuth(std::string token) : token_(std::move(token)) {}
  grpc::Status Check(const grpc::ServerContext* context) const;

 private:
  const std::string token_;
};

}  // namespace paceline::api
