// AccessServiceImpl's side of joining hosts: the cluster's CA, JoinHost and
// RevokeHostCertificate (access_service.h).

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "access/grant.h"
#include "access/token.h"
#include "api/access_service.h"
#include "api/grpc_status.h"
#include "wire/core.h"

namespace paceline::api {
namespace {

absl::Status NoTls() {
  return absl::FailedPreconditionError(
      "this master serves no TLS (--insecure-loopback), so hosts cannot join: start it without "
      "--insecure-loopback");
}

}  // namespace

grpc::Status AccessServiceImpl::GetClusterCa(grpc::ServerContext* ctx,
                                             const v1::GetClusterCaRequest*,
                                             v1::GetClusterCaResponse* resp) {
  if (grpc::Status a = access_->Check(ctx); !a.ok()) return a;
  if (certificates_.ca_pem.empty()) return ToGrpcStatus(NoTls());
  resp->set_ca_pem(certificates_.ca_pem);
  return grpc::Status::OK;
}

absl::StatusOr<records::TokenRecord> AccessServiceImpl::CheckJoinCredential(
    const grpc::ServerContext* ctx, const std::string& token, const std::string& host) {
  absl::StatusOr<access::TokenParts> parts = access::ParseToken(token);
  if (!parts.ok())
    return absl::UnauthenticatedError(absl::StrCat("token: ", parts.status().message()));
  std::optional<records::TokenRecord> record = access_->records()->FindToken(parts->id);
  if (!record.has_value() || !access::SecretMatches(*record, parts->secret)) {
    return absl::UnauthenticatedError(absl::StrCat("token: wrong token (id ", parts->id, ")"));
  }
  if (record->role == "agent" && absl::StartsWith(record->name, kCertTokenPrefix)) {
    // A renewal: the agent token of a join, with the certificate it names.
    if (absl::Status s = access::Usable(*record, absl::Now()); !s.ok()) return s;
    if (record->user != host) {
      return absl::PermissionDeniedError(absl::StrCat("host: agent token ", record->id,
                                                      " is for host ", record->user,
                                                      ", and it renews as ", host));
    }
    const std::string pem = PeerCertificatePem(*ctx);
    absl::StatusOr<std::string> serial = pem.empty() || !certificates_.serial_of
                                             ? absl::UnauthenticatedError("no client certificate")
                                             : certificates_.serial_of(pem);
    if (!serial.ok() || absl::StrCat(kCertTokenPrefix, *serial) != record->name) {
      return absl::UnauthenticatedError(
          absl::StrCat("token: renewing with agent token ", record->id,
                       " needs the certificate it was made with (", record->name.substr(5),
                       ") as the connection's client certificate"));
    }
    return *record;
  }
  if (record->role != "join") {
    return absl::UnauthenticatedError(
        absl::StrCat("token: ", record->id,
                     " is not a join token (make one with `paceline token create "
                     "--role agent --join --user HOST`)"));
  }
  const absl::Time now = absl::Now();
  if (absl::Status s = access::Usable(*record, now); !s.ok()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "token: join token ", record->id, " cannot be used: ", s.message(),
        " (a join token serves once; make another with `paceline token create --role agent "
        "--join`)"));
  }
  if (record->user != "*" && record->user != host) {
    return absl::PermissionDeniedError(absl::StrCat("host: join token ", record->id,
                                                    " is for host ", record->user,
                                                    ", and the host joins as ", host));
  }
  return *record;
}

absl::Time AccessServiceImpl::RenewedTokenEnd(const grpc::ServerContext& ctx) const {
  absl::Time end = absl::Now() + kRenewedTokenGrace;
  if (certificates_.not_after_of) {
    absl::StatusOr<absl::Time> cert_end = certificates_.not_after_of(PeerCertificatePem(ctx));
    if (cert_end.ok()) end = std::min(end, *cert_end);
  }
  return end;
}

grpc::Status AccessServiceImpl::JoinHost(grpc::ServerContext* ctx, const v1::JoinHostRequest* req,
                                         v1::JoinHostResponse* resp) {
  absl::StatusOr<access::TokenParts> id = access::ParseToken(req->token());
  access::Target target{.host = req->host(),
                        .object = absl::StrCat("host ", req->host(), " with token ",
                                               id.ok() ? id->id : "(malformed)")};
  if (grpc::Status a = access_->Check(ctx, target); !a.ok()) return a;
  if (access_->records() == nullptr) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "this master keeps no tokens: authentication is off");
  }
  if (!access::IsValidName(req->host())) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("host: '", req->host(), "' is not 1 to 64 of A-Z a-z 0-9 . _ @ -")));
  }
  absl::StatusOr<access::NewToken> agent_token = access::GenerateToken();
  if (!agent_token.ok()) return ToGrpcStatus(agent_token.status());
  records::TokenRecord join;
  HostCertificates::Signed cert;
  {
    // Check, sign, consume: one join at a time, so that a token cannot be used twice.
    absl::MutexLock lock(&join_mu_);
    absl::StatusOr<records::TokenRecord> found =
        CheckJoinCredential(ctx, req->token(), req->host());
    if (!found.ok()) return ToGrpcStatus(found.status());
    if (certificates_.ca_pem.empty() || !certificates_.sign) return ToGrpcStatus(NoTls());
    // A bad request leaves the token unused.
    absl::StatusOr<HostCertificates::Signed> made = certificates_.sign(req->host(), req->csr_pem());
    if (!made.ok()) return ToGrpcStatus(made.status());
    cert = *std::move(made);
    join = *std::move(found);
    if (join.role == "join") {
      join.revoked_at = absl::Now();
      if (absl::Status s = access_->records()->PutToken(join); !s.ok()) return ToGrpcStatus(s);
    } else if (absl::Time end = RenewedTokenEnd(*ctx); end < join.expires_at) {
      join.expires_at = end;
      if (absl::Status s = access_->records()->PutToken(join); !s.ok()) return ToGrpcStatus(s);
    }
  }
  records::TokenRecord record = agent_token->record;
  record.name = absl::StrCat(kCertTokenPrefix, cert.serial);
  record.user = req->host();
  record.scope = req->host();
  record.role = "agent";
  record.created_by =
      absl::StrCat(join.role == "join" ? "join token " : "renewal of token ", join.id);
  record.created_at = absl::Now();
  if (absl::Status s = access_->records()->PutToken(record); !s.ok()) return ToGrpcStatus(s);
  resp->set_cert_pem(cert.cert_pem);
  resp->set_ca_pem(certificates_.ca_pem);
  resp->set_agent_token(agent_token->token);
  resp->set_serial(cert.serial);
  resp->set_not_after_unix_ms(wire::ToUnixMillis(cert.not_after));
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::RevokeHostCertificate(grpc::ServerContext* ctx,
                                                      const v1::RevokeHostCertificateRequest* req,
                                                      v1::RevokeHostCertificateResponse* resp) {
  access::Target target{.host = req->host(),
                        .object = absl::StrCat("certificates of host ", req->host())};
  if (grpc::Status a = access_->Check(ctx, target); !a.ok()) return a;
  if (access_->records() == nullptr) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "this master keeps no tokens: authentication is off");
  }
  const absl::Time now = absl::Now();
  for (records::TokenRecord& r : access_->records()->ListTokens()) {
    if (r.role != "agent" || r.user != req->host() || !absl::StartsWith(r.name, kCertTokenPrefix)) {
      continue;
    }
    resp->add_serials(r.name.substr(sizeof(kCertTokenPrefix) - 1));
    if (r.revoked_at <= now) continue;  // revoking twice keeps the first time
    r.revoked_at = now;
    if (absl::Status s = access_->records()->PutToken(r); !s.ok()) return ToGrpcStatus(s);
    access_->EndCallsOf(r.id);
  }
  if (resp->serials().empty()) {
    return ToGrpcStatus(absl::NotFoundError(absl::StrCat(
        "host: ", req->host(),
        " holds no certificate issued at a join (`paceline agent join`); a certificate made "
        "with `paceline cert agent` is revoked by making a new cluster CA")));
  }
  access_->EndAgentCallsOf(req->host());  // its stream ends now, whatever token it used
  return grpc::Status::OK;
}

}  // namespace paceline::api
