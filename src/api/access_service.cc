#include "api/access_service.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "access/grant.h"
#include "access/token.h"
#include "api/grpc_status.h"
#include "wire/core.h"

namespace paceline::api {
namespace {

int64_t MillisOrZero(absl::Time t) {
  return t == absl::InfiniteFuture() ? 0 : wire::ToUnixMillis(t);
}

v1::TokenInfo InfoOf(const records::TokenRecord& r, absl::Time now) {
  v1::TokenInfo info;
  info.set_id(r.id);
  info.set_name(r.name);
  info.set_user(r.user);
  info.set_group(r.group);
  info.set_role(r.role);
  info.set_scope(r.scope);
  info.set_created_by(r.created_by);
  info.set_created_at_unix_ms(wire::ToUnixMillis(r.created_at));
  info.set_expires_at_unix_ms(MillisOrZero(r.expires_at));
  info.set_revoked_at_unix_ms(MillisOrZero(r.revoked_at));
  info.set_state(r.revoked_at <= now ? "REVOKED" : r.expires_at <= now ? "EXPIRED" : "ACTIVE");
  return info;
}

grpc::Status NoRecords() {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "this master keeps no tokens: authentication is off");
}

}  // namespace

grpc::Status AccessServiceImpl::WhoAmI(grpc::ServerContext* ctx, const v1::WhoAmIRequest*,
                                       v1::WhoAmIResponse* resp) {
  if (grpc::Status a = access_->Check(ctx); !a.ok()) return a;
  std::optional<access::Principal> who = access_->Caller(ctx);
  if (!who.has_value()) {
    resp->set_user("anonymous");
    resp->set_role("admin");
    resp->set_scope("/");
    return grpc::Status::OK;
  }
  resp->set_user(who->user);
  resp->set_group(who->group);
  resp->set_role(std::string(access::RoleName(who->role)));
  resp->set_scope(who->scope);
  resp->set_token_id(who->token_id);
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::CreateToken(grpc::ServerContext* ctx,
                                            const v1::CreateTokenRequest* req,
                                            v1::CreateTokenResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.object = absl::StrCat("token for ", req->user())});
      !a.ok()) {
    return a;
  }
  if (access_->records() == nullptr) return NoRecords();
  access::GrantRequest grant{req->user(), req->group(), req->role(), req->scope(), req->name()};
  absl::StatusOr<records::TokenRecord> checked = access::CheckGrant(grant);
  if (!checked.ok()) return ToGrpcStatus(checked.status());
  if (req->expires_in_seconds() < 0) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "expires_in_seconds: ", req->expires_in_seconds(), " is negative; 0 means never")));
  }
  absl::StatusOr<access::NewToken> made = access::GenerateToken();
  if (!made.ok()) return ToGrpcStatus(made.status());
  records::TokenRecord record = *std::move(checked);
  record.id = made->record.id;
  record.salt = made->record.salt;
  record.hash = made->record.hash;
  const absl::Time now = absl::Now();
  std::optional<access::Principal> who = access_->Caller(ctx);
  record.created_by = who.has_value() ? who->user : "anonymous";
  record.created_at = now;
  if (req->expires_in_seconds() > 0)
    record.expires_at = now + absl::Seconds(req->expires_in_seconds());
  if (req->join()) {
    if (record.role != "agent") {
      return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
          "join: a join token is for agents (role agent), and the role is ", record.role)));
    }
    if (certificates_.ca_pem.empty()) {
      return ToGrpcStatus(absl::FailedPreconditionError(
          "join: this master serves no TLS (--insecure-loopback), so hosts cannot join"));
    }
    record.role = "join";
    if (req->expires_in_seconds() == 0) record.expires_at = now + absl::Hours(1);
    resp->set_ca_hash(certificates_.ca_hash);
  }
  if (absl::Status s = access_->records()->PutToken(record); !s.ok()) return ToGrpcStatus(s);
  resp->set_token(made->token);
  *resp->mutable_info() = InfoOf(record, now);
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::ListTokens(grpc::ServerContext* ctx,
                                           const v1::ListTokensRequest* req,
                                           v1::ListTokensResponse* resp) {
  if (grpc::Status a = access_->Check(ctx); !a.ok()) return a;
  if (access_->records() == nullptr) return NoRecords();
  const absl::Time now = absl::Now();
  for (const records::TokenRecord& r : access_->records()->ListTokens()) {
    if (req->user().empty() || r.user == req->user()) *resp->add_tokens() = InfoOf(r, now);
  }
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::RevokeToken(grpc::ServerContext* ctx,
                                            const v1::RevokeTokenRequest* req,
                                            v1::RevokeTokenResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.object = absl::StrCat("token ", req->id())});
      !a.ok()) {
    return a;
  }
  if (access_->records() == nullptr) return NoRecords();
  std::optional<records::TokenRecord> record = access_->records()->FindToken(req->id());
  if (!record.has_value()) {
    return ToGrpcStatus(absl::NotFoundError(absl::StrCat("id: no token ", req->id(),
                                                         " (see token list; bootstrap tokens are "
                                                         "changed in the master's token files)")));
  }
  const absl::Time now = absl::Now();
  if (record->revoked_at > now) {  // revoking twice keeps the first time
    record->revoked_at = now;
    if (absl::Status s = access_->records()->PutToken(*record); !s.ok()) return ToGrpcStatus(s);
  }
  access_->EndCallsOf(record->id);  // its open watches and agent streams end now
  *resp->mutable_info() = InfoOf(*record, now);
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::ListAudit(grpc::ServerContext* ctx, const v1::ListAuditRequest* req,
                                          v1::ListAuditResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.pool = req->pool()}); !a.ok()) return a;
  if (access_->records() == nullptr) return NoRecords();
  records::AuditQuery query;
  query.user = req->user();
  query.pool = req->pool();
  if (req->since_unix_ms() > 0) query.since = absl::FromUnixMillis(req->since_unix_ms());
  if (!req->page_token().empty() &&
      (!absl::SimpleAtoi(req->page_token(), &query.before_seq) || query.before_seq <= 0)) {
    return ToGrpcStatus(
        absl::InvalidArgumentError("page_token: not a token from a previous ListAudit response"));
  }
  if (req->page_size() > 1000) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("page_size: ", req->page_size(), " is above the maximum of 1000")));
  }
  const size_t page = req->page_size() == 0 ? 100 : req->page_size();
  query.limit = page + 1;  // one more: is there a next page?
  absl::StatusOr<std::vector<records::AuditRecord>> found = access_->records()->ListAudit(query);
  if (!found.ok()) return ToGrpcStatus(found.status());
  for (size_t i = 0; i < std::min(page, found->size()); ++i) {
    const records::AuditRecord& r = (*found)[i];
    v1::AuditEntry* e = resp->add_entries();
    e->set_seq(r.seq);
    e->set_at_unix_ms(wire::ToUnixMillis(r.at));
    e->set_user(r.user);
    e->set_source(r.source);
    e->set_action(r.action);
    e->set_pool(r.pool);
    e->set_target(r.target);
    e->set_outcome(r.outcome);
    e->set_message(r.message);
    e->set_request_id(r.request_id);
  }
  if (found->size() > page) resp->set_next_page_token(absl::StrCat((*found)[page - 1].seq));
  return grpc::Status::OK;
}

}  // namespace paceline::api
