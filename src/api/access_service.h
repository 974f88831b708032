#pragma once
// AccessServiceImpl: gRPC adapter for paceline.v1.AccessService — the caller's identity, API
// tokens (created with a secret shown once, listed without secrets, revoked) and the audit log.
// Tokens and audit records live in the store (AccessRecords, access_control.h).
//
// Joining hosts (docs/operations.md "Joining hosts", access_join.cc): CreateToken with `join`
// makes a join token (role "join", one hour unless said otherwise), which grants no call but one
// JoinHost. JoinHost checks it, consumes it (its revoked_at is set: under one lock, so that two
// concurrent uses cannot both pass, and durable before the certificate is sent), has the CSR
// signed (HostCertificates::sign) and makes the host's agent token, whose name records the
// certificate's serial ("cert:SERIAL"). A joined agent renews its certificate with JoinHost too
// (`paceline agent renew`): its agent token instead of a join token, over mutual TLS with the
// certificate that token names; it gets a new certificate and a new agent token, and its old
// ones stay valid until the old certificate ends, the old token at most kRenewedTokenGrace
// after the renewal. RevokeHostCertificate revokes those tokens:
// the streams made with them end at once, and AccessControl refuses the certificates they name.
//
// Thread-safety: handlers run on gRPC threads; all state lives behind AccessRecords.

#include <functional>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/access_control.h"
#include "paceline/v1/access.grpc.pb.h"

namespace paceline::api {

// The cluster's CA, and how the master signs a joining host's request.
struct HostCertificates {
  struct Signed {
    std::string cert_pem;
    std::string serial;
    absl::Time not_after;
  };
  std::string ca_pem;   // empty: the master serves no TLS, and hosts cannot join
  std::string ca_hash;  // "sha256:<hex>" of the CA's public key
  std::function<absl::StatusOr<Signed>(const std::string& host, const std::string& csr_pem)> sign;
  // A certificate's serial number (hex), to match a renewing agent's certificate to its token.
  std::function<absl::StatusOr<std::string>(const std::string& cert_pem)> serial_of;
  // When a certificate ends: a renewed certificate's agent token ends with it (JoinHost).
  std::function<absl::StatusOr<absl::Time>(const std::string& cert_pem)> not_after_of;
};

// How long at most the agent token of a renewed certificate stays valid after the renewal:
// time for an agent stopped before it stored what the renewal sent to renew again with it.
inline constexpr absl::Duration kRenewedTokenGrace = absl::Hours(24);

// The prefix of the name of an agent token made at a join, before the certificate's serial.
inline constexpr char kCertTokenPrefix[] = "cert:";

class AccessServiceImpl final : public v1::AccessService::Service {
 public:
  explicit AccessServiceImpl(AccessControl* access, HostCertificates certificates = {})
      : access_(access), certificates_(std::move(certificates)) {}

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
  grpc::Status GetClusterCa(grpc::ServerContext* ctx, const v1::GetClusterCaRequest* req,
                            v1::GetClusterCaResponse* resp) override;
  grpc::Status JoinHost(grpc::ServerContext* ctx, const v1::JoinHostRequest* req,
                        v1::JoinHostResponse* resp) override;
  grpc::Status RevokeHostCertificate(grpc::ServerContext* ctx,
                                     const v1::RevokeHostCertificateRequest* req,
                                     v1::RevokeHostCertificateResponse* resp) override;

 private:
  // The record of `token` when it may buy `host` a certificate: a usable join token for
  // `host` (or any host), or — a renewal — the usable agent token a join made for `host`,
  // presented over a connection whose client certificate is that join's. UNAUTHENTICATED or
  // PERMISSION_DENIED otherwise.
  absl::StatusOr<records::TokenRecord> CheckJoinCredential(const grpc::ServerContext* ctx,
                                                           const std::string& token,
                                                           const std::string& host);

  // When the agent token a renewal was made with ends: with the certificate the connection
  // presents, and at most kRenewedTokenGrace from now.
  absl::Time RenewedTokenEnd(const grpc::ServerContext& ctx) const;

  AccessControl* const access_;
  const HostCertificates certificates_;
  absl::Mutex join_mu_;  // one join token check-and-consume at a time
};

}  // namespace paceline::api
