#include "api/auth.h"

#include <openssl/crypto.h>

#include "api/grpc_status.h"

namespace paceline::api {

grpc::Status TokenAuth::Check(const grpc::ServerContext* context) const {
  grpc::Status s = CheckToken(context);
  if (!s.ok() || !gate_) return s;
  return ToGrpcStatus(gate_());
}

grpc::Status TokenAuth::CheckToken(const grpc::ServerContext* context) const {
  if (token_.empty()) return grpc::Status::OK;
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing token: pass --token, set PACELINE_TOKEN, or put token: in "
                        "~/.paceline/config");
  }
  std::string got(it->second.data(), it->second.size());
  std::string want = "Bearer " + token_;
  // Constant-time comparison: do not leak the token through timing.
  if (got.size() != want.size() || CRYPTO_memcmp(got.data(), want.data(), got.size()) != 0) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong token");
  }
  return grpc::Status::OK;
}

}  // namespace paceline::api
