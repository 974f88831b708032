#include "api/access_control.h"

#include <openssl/crypto.h>

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "access/task_credential.h"
#include "access/token.h"
#include "api/grpc_status.h"

namespace paceline::api {
namespace {

bool SameSecret(absl::string_view a, absl::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// "paceline.v1.JobService/KillJob" -> "JobService.KillJob"; HTTP routes stay as they are.
std::string ActionName(absl::string_view method) {
  absl::ConsumePrefix(&method, "paceline.v1.");
  return absl::StrReplaceAll(method, {{"/", "."}});
}

bool IsRefusal(absl::StatusCode code) {
  return code == absl::StatusCode::kPermissionDenied || code == absl::StatusCode::kUnauthenticated;
}

}  // namespace

AccessControl::AccessControl(std::vector<BootstrapCredential> bootstrap, AccessRecords* records,
                             Gate gate, AccessOptions options)
    : bootstrap_(std::move(bootstrap)),
      records_(records),
      gate_(std::move(gate)),
      options_(options),
      enabled_(!bootstrap_.empty() || records_ != nullptr) {}

absl::StatusOr<access::Principal> AccessControl::Authenticate(absl::string_view authorization,
                                                              absl::Time now) const {
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        "missing token: pass --token, set PACELINE_TOKEN, or put token: in ~/.paceline/config");
  }
  absl::StatusOr<absl::string_view> token = access::BearerToken(authorization);
  if (!token.ok()) return token.status();
  for (const BootstrapCredential& b : bootstrap_) {
    if (SameSecret(*token, b.token)) return b.who;
  }
  if (access::IsTaskToken(*token)) {
    if (options_.task_key.empty() || records_ == nullptr) {
      return absl::UnauthenticatedError("this master does not accept task credentials");
    }
    absl::StatusOr<access::TaskClaim> claim =
        access::VerifyTaskToken(options_.task_key, *token, now);
    if (!claim.ok()) return claim.status();
    if (absl::Status live = records_->CheckRunLive(claim->job, claim->instance, claim->run);
        !live.ok()) {
      return live;
    }
    return access::TaskPrincipal(*claim);
  }
  if (!absl::StartsWith(*token, access::kTokenPrefix) || records_ == nullptr) {
    return absl::UnauthenticatedError("wrong token");
  }
  absl::StatusOr<access::TokenParts> parts = access::ParseToken(*token);
  if (!parts.ok()) return absl::UnauthenticatedError(parts.status().message());
  std::optional<records::TokenRecord> record = records_->FindToken(parts->id);
  if (!record.has_value() || !access::SecretMatches(*record, parts->secret)) {
    return absl::UnauthenticatedError(absl::StrCat("wrong token (id ", parts->id, ")"));
  }
  if (absl::Status s = access::Usable(*record, now); !s.ok()) return s;
  if (record->role == "join") {
    return absl::UnauthenticatedError(absl::StrCat(
        "token ", record->id, " is a join token: it serves only `paceline agent join`"));
  }
  std::optional<access::Role> role = access::RoleFromName(record->role);
  if (!role.has_value()) {
    return absl::UnauthenticatedError(
        absl::StrCat("token ", record->id, " has the unknown role '", record->role, "'"));
  }
  return access::Principal{record->user, record->group, *role, record->scope, record->id};
}

void AccessControl::BeginCall(grpc::ServerContextBase* call, absl::string_view method,
                              absl::string_view authorization, std::string source,
                              std::string request_id, const std::string& min_revision) {
  Call c;
  c.context = call;
  c.method = std::string(access::RpcRoute(method));
  c.permission = access::FindPermission(c.method);
  // The gate first, here on the call's own thread: a standby may wait for the revision asked
  // for (which the handlers' Check, often on the core's loop, must not), and then knows the
  // tokens made up to it.
  c.admitted = Admit(c.permission != nullptr && c.permission->followed, min_revision);
  c.caller = enabled_ ? Authenticate(authorization, absl::Now())
                      : absl::StatusOr<access::Principal>(absl::NotFoundError("off"));
  if (!c.caller.ok() && enabled_) c.claimed_task = ClaimedTask(authorization);
  c.source = std::move(source);
  c.request_id = std::move(request_id);
  absl::MutexLock lock(&mu_);
  calls_[call] = std::move(c);
}

absl::StatusOr<AnswerStamp> AccessControl::Admit(bool followed_read,
                                                 const std::string& min_revision) const {
  int64_t at_least = -1;
  if (!min_revision.empty() && (!absl::SimpleAtoi(min_revision, &at_least) || at_least < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kMinRevisionKey, ": expected a revision number, got '", min_revision, "'"));
  }
  if (!gate_.admit) return AnswerStamp{};
  return gate_.admit(followed_read, at_least);
}

std::string AccessControl::ClaimedTask(absl::string_view authorization) const {
  absl::StatusOr<absl::string_view> token = access::BearerToken(authorization);
  if (!token.ok() || !access::IsTaskToken(*token) || options_.task_key.empty()) return "";
  absl::StatusOr<access::TaskClaim> claim =
      access::VerifyTaskToken(options_.task_key, *token, absl::InfinitePast());
  return claim.ok() ? access::TaskPrincipal(*claim).user : "";
}

std::vector<std::pair<std::string, std::string>> AccessControl::AnswerMetadata(
    const grpc::ServerContextBase* call) const {
  std::optional<AnswerStamp> stamp;
  {
    absl::MutexLock lock(&mu_);
    auto it = calls_.find(call);
    if (it == calls_.end() || !it->second.checked || !it->second.admitted.ok()) return {};
    stamp = *it->second.admitted;
  }
  std::vector<std::pair<std::string, std::string>> out;
  if (!stamp->served_by.empty()) out.emplace_back(kServedByKey, stamp->served_by);
  int64_t revision = stamp->revision;
  if (stamp->served_by != "standby" && gate_.committed_revision) {
    revision = gate_.committed_revision();  // what it has committed, this call's writes included
  }
  if (revision >= 0) out.emplace_back(kRevisionKey, absl::StrCat(revision));
  if (stamp->served_by == "standby") {
    out.emplace_back(kStalenessKey, absl::StrCat(absl::ToInt64Milliseconds(stamp->staleness)));
  }
  return out;
}

bool AccessControl::MayAnswer(const grpc::ServerContextBase* call) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(call);
  if (it == calls_.end()) return true;
  const Call& c = it->second;
  return c.checked || (c.permission != nullptr && c.permission->need == access::Need::kPublic);
}

void AccessControl::EndAgentCallsOf(const std::string& host) {
  absl::MutexLock lock(&mu_);
  for (auto& [ctx, c] : calls_) {
    if (c.checked && c.target.host == host && c.method == "paceline.v1.AgentService/Connect") {
      c.context->TryCancel();
    }
  }
}

void AccessControl::EndCallsOf(const std::string& token_id) {
  absl::MutexLock lock(&mu_);
  for (auto& [ctx, c] : calls_) {
    if (c.caller.ok() && c.caller->token_id == token_id) c.context->TryCancel();
  }
}

std::optional<grpc::Status> AccessControl::EndCall(const grpc::ServerContextBase* call,
                                                   const grpc::Status& status) {
  Call c;
  {
    absl::MutexLock lock(&mu_);
    auto it = calls_.find(call);
    if (it == calls_.end()) return std::nullopt;
    c = std::move(it->second);
    calls_.erase(it);
  }
  std::optional<grpc::Status> instead;
  if (status.ok() && !c.checked &&
      (c.permission == nullptr || c.permission->need != access::Need::kPublic)) {
    std::cerr << "master: " << c.method << " answered without checking its permission" << std::endl;
    instead = grpc::Status(grpc::StatusCode::INTERNAL,
                           absl::StrCat(c.method, " did not check the caller's permission"));
  }
  const grpc::Status& sent = instead.has_value() ? *instead : status;
  const auto code = static_cast<absl::StatusCode>(sent.error_code());
  const bool by_task = c.caller.ok() && c.caller->role == access::Role::kTask;
  if (enabled_ && records_ != nullptr &&
      (IsRefusal(code) || by_task || (c.permission != nullptr && c.permission->audited))) {
    WriteAudit(c, code, sent.error_message());
  }
  return instead;
}

grpc::Status AccessControl::Check(const grpc::ServerContextBase* ctx, access::Target target) {
  const grpc::ServerContextBase* key = ctx;
  const access::Permission* permission = nullptr;
  absl::StatusOr<access::Principal> caller = absl::NotFoundError("unknown call");
  absl::StatusOr<AnswerStamp> admitted = absl::UnknownError("unknown call");
  std::string method;
  {
    absl::MutexLock lock(&mu_);
    auto it = calls_.find(key);
    if (it == calls_.end()) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "unknown call: refused");
    }
    it->second.checked = true;
    it->second.target = target;
    permission = it->second.permission;
    caller = it->second.caller;
    method = it->second.method;
    admitted = it->second.admitted;
  }
  if (permission == nullptr) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(method, " has no entry in the permission table: refused"));
  }
  // A master that does not serve the call (a standby, but for the reads it answers from its
  // followed state) says so first, with the leader's address: the caller should go there.
  if (!admitted.ok()) return ToGrpcStatus(admitted.status());
  if (enabled_ && permission->need != access::Need::kPublic) {
    if (!caller.ok()) return ToGrpcStatus(caller.status());
    if (absl::Status s = access::Authorize(*caller, *permission, target); !s.ok()) {
      return ToGrpcStatus(s);
    }
  }
  return grpc::Status::OK;
}

grpc::Status AccessControl::CheckAgentCertificate(const grpc::ServerContextBase* ctx,
                                                  const std::string& host) const {
  if (!options_.agents_need_certificates) return grpc::Status::OK;
  std::shared_ptr<const grpc::AuthContext> auth = ctx->auth_context();
  std::vector<grpc::string_ref> names;
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    names = auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
  }
  if (names.empty()) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("host ", host,
                                     ": an agent presents a client certificate of this cluster "
                                     "(make one with `paceline cert agent ",
                                     host, "`, then start the agent with --cert and --key)"));
  }
  const std::string cn(names[0].data(), names[0].size());
  if (cn != host) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("the agent's certificate is for host ", cn,
                                     ", and it registers as host ", host));
  }
  if (options_.certificate_revoked) {
    absl::Status s = options_.certificate_revoked(PeerCertificatePem(*ctx));
    if (!s.ok()) return ToGrpcStatus(s);
  }
  return grpc::Status::OK;
}

std::optional<access::Principal> AccessControl::Caller(const grpc::ServerContextBase* ctx) const {
  if (!enabled_) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(ctx);
  if (it == calls_.end() || !it->second.caller.ok()) return std::nullopt;
  return *it->second.caller;
}

bool AccessControl::AllowHttp(const http::HttpRequest& req, absl::string_view route,
                              http::HttpResponse& res) {
  const access::Permission* permission = access::FindPermission(route);
  absl::Status verdict;
  Call c;
  c.method = std::string(route);
  c.source = req.peer;
  c.permission = permission;
  if (permission == nullptr) {
    verdict = absl::PermissionDeniedError(
        absl::StrCat(route, " has no entry in the permission table: refused"));
  } else if (enabled_ && permission->need != access::Need::kPublic &&
             permission->need != access::Need::kViaRpc) {
    c.caller = Authenticate(req.header("Authorization"), absl::Now());
    verdict = c.caller.ok() ? access::Authorize(*c.caller, *permission, {}) : c.caller.status();
  }
  if (verdict.ok()) return true;
  if (enabled_ && records_ != nullptr) WriteAudit(c, verdict.code(), verdict.message());
  res.status = verdict.code() == absl::StatusCode::kUnauthenticated ? 401 : 403;
  res.set_content(std::string(verdict.message()) + "\n", "text/plain");
  return false;
}

bool AccessControl::AllowRefusalRecord(const std::string& source, absl::Time now) {
  // The address without its port: one client, however many connections.
  const std::string client = source.substr(0, source.rfind(':'));
  absl::MutexLock lock(&refusals_mu_);
  if (refusals_.size() > 10000) refusals_.clear();  // many addresses: start over
  Allowance& a = refusals_[client];
  const absl::Time minute =
      absl::UnixEpoch() + absl::Floor(now - absl::UnixEpoch(), absl::Minutes(1));
  if (a.minute != minute) {
    if (a.dropped > 0) {
      std::cerr << "master: " << a.dropped << " more refused requests from " << client
                << " were not written to the audit log (at most " << kRefusalsPerMinute
                << " a minute per client)" << std::endl;
    }
    a = Allowance{minute, 0, 0};
  }
  if (a.recorded >= kRefusalsPerMinute) {
    ++a.dropped;
    return false;
  }
  ++a.recorded;
  return true;
}

void AccessControl::WriteAudit(const Call& call, absl::StatusCode code, absl::string_view message) {
  if (gate_.admit && !gate_.admit(false, -1).ok()) return;  // a standby writes nothing
  records::AuditRecord r;
  r.at = absl::Now();
  if (IsRefusal(code) && !AllowRefusalRecord(call.source, r.at)) return;
  r.user = call.caller.ok() ? call.caller->user : call.claimed_task;
  r.source = call.source;
  r.action = ActionName(call.method);
  r.pool = call.target.pool;
  r.target = call.target.object;
  r.outcome = absl::StatusCodeToString(code);
  r.message = std::string(message);
  r.request_id = call.request_id;
  records_->Audit(std::move(r));
}

std::string PeerCertificatePem(const grpc::ServerContextBase& ctx) {
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return "";
  std::vector<grpc::string_ref> pems = auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  return pems.empty() ? "" : std::string(pems[0].data(), pems[0].size());
}

}  // namespace paceline::api
