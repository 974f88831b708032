#pragma once
// AccessServiceImpl: gRPC adapter for paceline.v1.AccessService — the caller's identity, API
// tokens (created with a secret shown once, listed without secrets, revoked) and the audit log.
// Tokens and audit records live in the store (AccessRecords, access_control.h).
//
// Thread-safety: handlers run on gRPC threads; all state lives behind AccessRecords.

#include "api/access_control.h"
#include "paceline/v1/access.grpc.pb.h"

namespace paceline::api {

class AccessServiceImpl final : public v1::AccessService::Service {
 public:
  explicit AccessServiceImpl(AccessControl* access) : access_(access) {}

  grpc::Status WhoAmI(grpc::ServerContext* ctx, const v1::WhoAmIRequest* req,
                      v1::WhoAmIResponse* resp) override;
  grpc::Status CreateToken(grpc::ServerContext* ctx, const v1::CreateTokenRequest* req,
                           v1::CreateTokenResponse* resp) override;
  grpc::Status ListTokens(grpc::ServerContext* ctx, const v1::ListTokensRequest* req,
                          v1::ListTokensResponse* resp) override;
  grpc::Status RevokeToken(grpc::ServerContext* ctx, const v1::RevokeTokenRequest* req,
                           v1::RevokeTokenResponse* resp) override;
  grpc::Status ListAudit(grpc::ServerContext* ctx, const v1::ListAuditRequest* req,
                         v1::ListAuditResponse* resp) override;

 private:
  AccessControl* const access_;
};

}  // namespace paceline::api
